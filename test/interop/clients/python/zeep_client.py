"""Calls the service through a zeep client built from the live WSDL, over one of its ports
(RegSoap, RegSoap12, RegHttpGet, RegHttpPost), and prints what a Python caller sees as JSON.

Usage: zeep_client.py PORT WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
"""
import json
import sys

import zeep
import zeep.exceptions


def value(v):
    """The text of a simpleContent element (zeep puts it in _value_1), as a string or None."""
    if v is None:
        return None
    inner = getattr(v, '_value_1', v)
    return None if inner is None else str(inner)


def vehicle(v):
    d = v.vehicleData
    return {
        'vehicleJson': v.vehicleJson,
        'description': value(d.Description) if d is not None else None,
        'year': value(d.RegistrationYear) if d is not None else None,
        'make': value(d.CarMake.CurrentTextValue) if d is not None and d.CarMake is not None else None,
        'engineSize': value(d.EngineSize.CurrentValue) if d is not None and d.EngineSize is not None else None,
    }


def strings(a):
    return [] if a is None else list(a.string)


def mot(m):
    tests = [] if m.Tests is None else m.Tests.UKTest
    rows = [] if m.ExtendedInformation is None else m.ExtendedInformation.ArrayOfString
    return {
        'taxDate': m.taxDate,
        'tests': [{'testDate': t.TestDate, 'result': t.Result, 'odometer': t.Odometer,
                   'failureReasons': strings(t.FailureReasons), 'advisories': strings(t.Advisories)} for t in tests],
        'extended': [strings(r) for r in rows],
    }


def failure(e):
    if isinstance(e, zeep.exceptions.Fault):
        # Over the HTTP bindings zeep raises a Fault whose message is the raw response body.
        message = e.message.decode('utf-8', 'replace') if isinstance(e.message, bytes) else e.message
        detail = None if e.detail is None else ''.join(e.detail.itertext())
        return {'error': message, 'code': e.code, 'detail': detail}
    if isinstance(e, zeep.exceptions.TransportError):
        body = e.content.decode('utf-8', 'replace') if isinstance(e.content, bytes) else e.content
        return {'error': body, 'code': str(e.status_code), 'exception': e.message}
    return {'exception': '%s: %s' % (type(e).__name__, e)}


def run(call):
    try:
        return call()
    except Exception as e:  # what the caller sees is the point of the test, so report every kind
        return failure(e)


def main(port, wsdl, check, usa, state, mot_reg, missing, empty, quoted):
    svc = zeep.Client(wsdl).bind('Reg', port)
    # zeep form-encodes an omitted part of an HTTP POST message as the text "None" (README), so
    # the optional UKMOT Model is given as empty there; the other ports omit it.
    optional = {'Model': ''} if port == 'RegHttpPost' else {}
    out = {
        'check': run(lambda: vehicle(svc.Check(RegistrationNumber=check, username='demo'))),
        'usa': run(lambda: vehicle(svc.CheckUSA(RegistrationNumber=usa, State=state, username='demo'))),
        'mot': run(lambda: mot(svc.UKMOT(RegistrationNumber=mot_reg, username='demo', **optional))),
        'missing': run(lambda: {'unexpected': vehicle(svc.Check(RegistrationNumber=missing, username='demo'))}),
        'empty': run(lambda: vehicle(svc.Check(RegistrationNumber=empty, username='demo'))),
        'quoted': run(lambda: vehicle(svc.Check(RegistrationNumber=quoted, username='demo'))),
    }
    sys.stdout.write(json.dumps(out))


if __name__ == '__main__':
    main(*sys.argv[1:10])
