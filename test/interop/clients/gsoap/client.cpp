// Calls the service through the C++ proxies gSOAP's wsdl2h + soapcpp2 generated from the WSDL and
// prints what a C++ caller sees, as one JSON object on stdout.
// Usage: client soap|soap12|post|get|post-unfixed URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
// (post-unfixed: HTTP POST without the http_content workaround, to show the limitation still holds)
#include <cstdio>
#include <string>
#include <vector>
#include "soapRegSoapProxy.h"
#include "soapRegSoap12Proxy.h"
#include "soapRegHttpPostProxy.h"
#include "soapRegHttpGetProxy.h"


// One namespace table for the whole program: the four generated .nsmap files are identical.
#include "RegSoap.nsmap"

static std::string str(const std::string *s) {
  if (!s) return "null";
  std::string out = "\"";
  for (unsigned char c : *s) {
    if (c == '"' || c == '\\') { out += '\\'; out += (char)c; }
    else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
    else out += (char)c;
  }
  return out + "\"";
}
static std::string str(const std::string &s) { return str(&s); }
static std::string str(const char *s) { if (!s) return "null"; std::string t(s); return str(&t); }

static std::string obj(const std::vector<std::pair<std::string, std::string>> &kv) {
  std::string out = "{";
  for (size_t i = 0; i < kv.size(); i++) out += (i ? "," : "") + str(kv[i].first) + ":" + kv[i].second;
  return out + "}";
}

static std::string arr(const reg__ArrayOfString *a) {
  std::string out = "[";
  if (a) for (size_t i = 0; i < a->string.size(); i++) out += (i ? "," : "") + str(a->string[i]);
  return out + "]";
}

template <class T> static const std::string *item(const T *v) { return v ? &v->__item : nullptr; }

static std::string vehicle(const reg__Vehicle *v) {
  if (!v) return obj({{"exception", str("the call returned no Vehicle")}});
  const reg__vehicleData *d = v->vehicleData;
  return obj({
      {"vehicleJson", str(v->vehicleJson)},
      {"description", str(d ? item(d->Description) : nullptr)},
      {"year", str(d ? item(d->RegistrationYear) : nullptr)},
      {"make", str(d && d->CarMake ? item(d->CarMake->CurrentTextValue) : nullptr)},
      {"engineSize", str(d && d->EngineSize ? item(d->EngineSize->CurrentValue) : nullptr)},
  });
}

static std::string mot(const reg__UKMOTData *m) {
  if (!m) return obj({{"exception", str("the call returned no UKMOTData")}});
  std::string tests = "[";
  if (m->Tests)
    for (size_t i = 0; i < m->Tests->UKTest.size(); i++) {
      const reg__UKTest *t = m->Tests->UKTest[i];
      tests += (i ? "," : "") + (t ? obj({{"testDate", str(t->TestDate)}, {"result", str(t->Result)}, {"odometer", str(t->Odometer)},
                                          {"failureReasons", arr(t->FailureReasons)}, {"advisories", arr(t->Advisories)}})
                                   : std::string("null"));
    }
  tests += "]";
  std::string rows = "[";
  if (m->ExtendedInformation)
    for (size_t i = 0; i < m->ExtendedInformation->ArrayOfString.size(); i++) rows += (i ? "," : "") + arr(m->ExtendedInformation->ArrayOfString[i]);
  rows += "]";
  return obj({{"taxDate", str(m->taxDate)}, {"tests", tests}, {"extended", rows}});
}

// What the caller sees when a call fails: the fault's string, code and detail (gSOAP also turns an
// HTTP error status into a fault, with the response body as the fault string when it is not XML).
static std::string failure(struct soap *soap) {
  const char **code = soap_faultcode(soap);
  return obj({{"error", str(soap_fault_string(soap))}, {"code", str(code && *code ? *code : nullptr)},
              {"detail", str(soap_fault_detail(soap))}, {"status", std::to_string(soap->error)}});
}

// Builds the HTTP GET address: wsdl2h gives GET operations no input parameters (see README), so
// the caller appends the query string with gSOAP's own URL helpers; the proxy then inserts the
// operation path ("/Check") in front of the query.
static std::string getUrl(struct soap *soap, const std::string &base, const std::vector<std::pair<std::string, std::string>> &params) {
  soap_extend_url_query(soap, base.c_str(), "");
  for (const auto &p : params) soap_url_query(soap, (p.first + "=").c_str(), p.second.c_str());
  std::string url = soap->msgbuf;
  if (!url.empty() && url.back() == '&') url.pop_back();
  return url;
}

int main(int argc, char **argv) {
  if (argc < 10) { std::fprintf(stderr, "usage: client soap|soap12|post|get|post-unfixed URL CHECK USA STATE MOT MISSING EMPTY QUOTED\n"); return 2; }
  const bool unfixed = std::string(argv[1]) == "post-unfixed";
  const std::string mode = unfixed ? "post" : argv[1], url = argv[2];
  const std::string checkReg = argv[3], usaReg = argv[4], usaState = argv[5], motReg = argv[6], missingReg = argv[7], emptyReg = argv[8], quotedReg = argv[9];
  const std::string user = "demo";
  if (mode != "soap" && mode != "soap12" && mode != "post" && mode != "get") { std::fprintf(stderr, "unknown mode %s\n", mode.c_str()); return 2; }

  RegSoapProxy soap11(SOAP_C_UTFSTRING);
  RegSoap12Proxy soap12(SOAP_C_UTFSTRING);
  RegHttpPostProxy post(SOAP_C_UTFSTRING);
  RegHttpGetProxy get(SOAP_C_UTFSTRING);
  struct soap *ctx = mode == "soap" ? soap11.soap : mode == "soap12" ? soap12.soap : mode == "post" ? post.soap : get.soap;
  ctx->recv_timeout = ctx->send_timeout = ctx->connect_timeout = 20;
  // wsdl2h imports soap12.h when a WSDL has any SOAP 1.2 binding, which makes every proxy speak
  // SOAP 1.2; a SOAP 1.1 caller selects the version on its context (see README).


  // gSOAP keeps the Content-Type of the last response in ctx->http_content and sends it with the
  // next REST POST instead of the form type (see README); clear it before every call.
  auto prepare = [&]() { if (mode == "post" && !unfixed) ctx->http_content = NULL; };

  auto check = [&](const std::string &reg, const std::string *state, reg__Vehicle *&out) -> int {
    prepare();
    if (mode == "post" || mode == "get") {
      reg__Vehicle *v = soap_new_reg__Vehicle(ctx);
      int rc;
      if (mode == "post") rc = state ? post.CheckUSA(url.c_str(), NULL, reg, *state, user, *v) : post.Check(url.c_str(), NULL, reg, user, *v);
      else if (state) rc = get.CheckUSAResponse(getUrl(ctx, url, {{"RegistrationNumber", reg}, {"State", *state}, {"username", user}}).c_str(), NULL, *v);
      else rc = get.CheckResponse(getUrl(ctx, url, {{"RegistrationNumber", reg}, {"username", user}}).c_str(), NULL, *v);
      out = v;
      return rc;
    }
    std::string *r = soap_new_std__string(ctx), *u = soap_new_std__string(ctx), *s = state ? soap_new_std__string(ctx) : nullptr;
    *r = reg; *u = user; if (s) *s = *state;
    if (state) {
      _reg__CheckUSA req; req.RegistrationNumber = r; req.State = s; req.username = u;
      _reg__CheckUSAResponse *resp = soap_new__reg__CheckUSAResponse(ctx);
      int rc = mode == "soap" ? soap11.CheckUSA(url.c_str(), NULL, &req, *resp) : soap12.CheckUSA(url.c_str(), NULL, &req, *resp);
      out = resp->CheckUSAResult;
      return rc;
    }
    _reg__Check req; req.RegistrationNumber = r; req.username = u;
    _reg__CheckResponse *resp = soap_new__reg__CheckResponse(ctx);
    int rc = mode == "soap" ? soap11.Check(url.c_str(), NULL, &req, *resp) : soap12.Check(url.c_str(), NULL, &req, *resp);
    out = resp->CheckResult;
    return rc;
  };
  auto ukmot = [&](const std::string &reg, reg__UKMOTData *&out) -> int {
    prepare();
    if (mode == "post" || mode == "get") {
      reg__UKMOTData *m = soap_new_reg__UKMOTData(ctx);
      int rc = mode == "post" ? post.UKMOT(url.c_str(), NULL, reg, "", user, *m)
                              : get.UKMOTResponse(getUrl(ctx, url, {{"RegistrationNumber", reg}, {"username", user}}).c_str(), NULL, *m);
      out = m;
      return rc;
    }
    std::string *r = soap_new_std__string(ctx), *u = soap_new_std__string(ctx);
    *r = reg; *u = user;
    _reg__UKMOT req; req.RegistrationNumber = r; req.username = u;
    _reg__UKMOTResponse *resp = soap_new__reg__UKMOTResponse(ctx);
    int rc = mode == "soap" ? soap11.UKMOT(url.c_str(), NULL, &req, *resp) : soap12.UKMOT(url.c_str(), NULL, &req, *resp);
    out = resp->UKMOTResult;
    return rc;
  };
  auto vehicleCall = [&](const std::string &reg, const std::string *state) -> std::string {
    reg__Vehicle *v = nullptr;
    return check(reg, state, v) == SOAP_OK ? vehicle(v) : failure(ctx);
  };

  std::string out = "{";
  out += str("check") + ":" + vehicleCall(checkReg, nullptr);
  out += "," + str("usa") + ":" + vehicleCall(usaReg, &usaState);
  {
    reg__UKMOTData *m = nullptr;
    out += "," + str("mot") + ":" + (ukmot(motReg, m) == SOAP_OK ? mot(m) : failure(ctx));
  }
  {
    reg__Vehicle *v = nullptr;
    out += "," + str("missing") + ":" + (check(missingReg, nullptr, v) == SOAP_OK ? obj({{"unexpected", vehicle(v)}}) : failure(ctx));
  }
  out += "," + str("empty") + ":" + vehicleCall(emptyReg, nullptr);
  out += "," + str("quoted") + ":" + vehicleCall(quotedReg, nullptr);
  out += "}";
  std::fwrite(out.data(), 1, out.size(), stdout);
  soap_destroy(ctx);
  soap_end(ctx);
  return 0;
}
