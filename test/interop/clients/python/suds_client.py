"""Calls the service through a suds client built from the live WSDL and prints what a Python
caller sees, as JSON. suds offers the SOAP ports only (see README).

Usage: suds_client.py PORT WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
"""
import json
import sys

import suds
import suds.client


def value(v):
    """suds gives simpleContent with an attribute as an object whose text is in .value."""
    if v is None:
        return None
    inner = getattr(v, 'value', v)
    return None if inner is None else str(inner)


def child(obj, name):
    return None if obj is None else getattr(obj, name, None)


def vehicle(v):
    d = child(v, 'vehicleData')
    return {
        'vehicleJson': child(v, 'vehicleJson'),
        'description': value(child(d, 'Description')),
        'year': value(child(d, 'RegistrationYear')),
        'make': value(child(child(d, 'CarMake'), 'CurrentTextValue')),
        'engineSize': value(child(child(d, 'EngineSize'), 'CurrentValue')),
    }


def strings(a):
    return [str(s) for s in (child(a, 'string') or [])]


def mot(m):
    tests = child(child(m, 'Tests'), 'UKTest') or []
    rows = child(child(m, 'ExtendedInformation'), 'ArrayOfString') or []
    return {
        'taxDate': child(m, 'taxDate'),
        'tests': [{'testDate': t.TestDate, 'result': t.Result, 'odometer': t.Odometer,
                   'failureReasons': strings(child(t, 'FailureReasons')), 'advisories': strings(child(t, 'Advisories'))} for t in tests],
        'extended': [strings(r) for r in rows],
    }


def failure(e):
    if isinstance(e, suds.WebFault):
        detail = child(child(e.fault, 'detail'), 'ErrorCode')
        return {'error': str(e.fault.faultstring), 'code': str(e.fault.faultcode), 'detail': None if detail is None else str(detail)}
    return {'exception': '%s: %s' % (type(e).__name__, e)}


def run(call):
    try:
        return call()
    except Exception as e:  # what the caller sees is the point of the test, so report every kind
        return failure(e)


def main(port, wsdl, check, usa, state, mot_reg, missing, empty, quoted):
    svc = suds.client.Client(wsdl, cache=None).service[port]
    out = {
        'check': run(lambda: vehicle(svc.Check(check, 'demo'))),
        'usa': run(lambda: vehicle(svc.CheckUSA(usa, state, 'demo'))),
        'mot': run(lambda: mot(svc.UKMOT(mot_reg, None, 'demo'))),
        'missing': run(lambda: {'unexpected': vehicle(svc.Check(missing, 'demo'))}),
        'empty': run(lambda: vehicle(svc.Check(empty, 'demo'))),
        'quoted': run(lambda: vehicle(svc.Check(quoted, 'demo'))),
    }
    sys.stdout.write(json.dumps(out))


if __name__ == '__main__':
    main(*sys.argv[1:10])
