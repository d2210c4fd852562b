// Calls the service through a proxy that Mono's `wsdl` tool generated (namespace RegProxy, any of
// the four protocols) and prints what a .NET caller sees, as one JSON object on stdout.
// Usage: client.exe URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Text;
using System.Web.Services.Protocols;
using RegProxy;

static class Client {
    static string Str(string s) {
        if (s == null) return "null";
        var b = new StringBuilder("\"");
        foreach (char c in s) {
            if (c == '"' || c == '\\') b.Append('\\').Append(c);
            else if (c < 0x20) b.AppendFormat("\\u{0:x4}", (int)c);
            else b.Append(c);
        }
        return b.Append('"').ToString();
    }

    static string Obj(params string[] kv) {
        var parts = new List<string>();
        for (int i = 0; i < kv.Length; i += 2) parts.Add(Str(kv[i]) + ":" + kv[i + 1]);
        return "{" + string.Join(",", parts) + "}";
    }

    static string Arr(IEnumerable<string> items) {
        var parts = new List<string>();
        if (items != null) foreach (var s in items) parts.Add(Str(s));
        return "[" + string.Join(",", parts) + "]";
    }

    static string Vehicle(Vehicle v) {
        var d = v.vehicleData;
        return Obj(
            "vehicleJson", Str(v.vehicleJson),
            "description", Str(d == null || d.Description == null ? null : d.Description.Value),
            "year", Str(d == null || d.RegistrationYear == null ? null : d.RegistrationYear.Value),
            "make", Str(d == null || d.CarMake == null || d.CarMake.CurrentTextValue == null ? null : d.CarMake.CurrentTextValue.Value),
            "engineSize", Str(d == null || d.EngineSize == null || d.EngineSize.CurrentValue == null ? null : d.EngineSize.CurrentValue.Value));
    }

    static string Mot(UKMOTData m) {
        var tests = new List<string>();
        if (m.Tests != null) foreach (var t in m.Tests)
            tests.Add(Obj("testDate", Str(t.TestDate), "result", Str(t.Result), "odometer", Str(t.Odometer),
                "failureReasons", Arr(t.FailureReasons), "advisories", Arr(t.Advisories)));
        var rows = new List<string>();
        if (m.ExtendedInformation != null) foreach (var row in m.ExtendedInformation) rows.Add(Arr(row));
        return Obj("taxDate", Str(m.taxDate), "tests", "[" + string.Join(",", tests) + "]", "extended", "[" + string.Join(",", rows) + "]");
    }

    // What the caller gets from a failed call: the fault for SOAP, the HTTP response for HttpGet/Post.
    static string Failure(Exception e) {
        var soap = e as SoapException;
        if (soap != null)
            return Obj("error", Str(soap.Message), "code", Str(soap.Code == null ? null : soap.Code.Name),
                "detail", Str(soap.Detail == null ? null : soap.Detail.InnerText));
        var web = e as WebException;
        if (web != null && web.Response != null) {
            var resp = (HttpWebResponse)web.Response;
            string body;
            using (var r = new StreamReader(resp.GetResponseStream())) body = r.ReadToEnd();
            return Obj("error", Str(body), "status", ((int)resp.StatusCode).ToString(), "thrown", Str(e.GetType().Name + ": " + e.Message));
        }
        return Obj("exception", Str(e.ToString()));
    }

    static string Run(Func<string> call) {
        try { return call(); } catch (Exception e) { return Failure(e); }
    }

    static int Main(string[] a) {
        var reg = new Reg();
        reg.Url = a[0];
        reg.Timeout = 20000;
        var parts = new List<string> {
            Str("check") + ":" + Run(() => Vehicle(reg.Check(a[1], "demo"))),
            Str("usa") + ":" + Run(() => Vehicle(reg.CheckUSA(a[2], a[3], "demo"))),
            Str("mot") + ":" + Run(() => Mot(reg.UKMOT(a[4], null, "demo"))),
            Str("missing") + ":" + Run(() => Obj("unexpected", Vehicle(reg.Check(a[5], "demo")))),
            Str("empty") + ":" + Run(() => Vehicle(reg.Check(a[6], "demo"))),
            Str("quoted") + ":" + Run(() => Vehicle(reg.Check(a[7], "demo"))),
        };
        var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
        stdout.Write("{" + string.Join(",", parts) + "}");
        stdout.Flush();
        return 0;
    }
}
