"""What the Python clients share: the six calls every client makes (test/interop/calls.ts), what a
caller sees of each, read into the report's shape, printed as one JSON object.

A client gives its toolkit's part: connect(port, wsdl), which builds the client and returns its
three operations as check(reg), check_usa(reg, state) and ukmot(reg); failure(e), what a caller
sees of an exception the toolkit raised; and text_attr, the attribute in which the toolkit keeps
the text of a simpleContent element that has attributes.
"""
import json
import sys


def child(obj, name):
    """obj.name, or None when obj is None or has no such member."""
    return None if obj is None else getattr(obj, name, None)


def text(v, text_attr):
    """The text of a simpleContent element, or of a plain value, as a string or None."""
    if v is None:
        return None
    inner = getattr(v, text_attr, v)
    return None if inner is None else str(inner)


def vehicle(v, text_attr):
    d = child(v, 'vehicleData')
    return {
        'vehicleJson': child(v, 'vehicleJson'),
        'description': text(child(d, 'Description'), text_attr),
        'year': text(child(d, 'RegistrationYear'), text_attr),
        'make': text(child(child(d, 'CarMake'), 'CurrentTextValue'), text_attr),
        'engineSize': text(child(child(d, 'EngineSize'), 'CurrentValue'), text_attr),
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


def main(connect, failure, text_attr):
    """Reads PORT WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
    from the command line, makes the six calls and prints the report."""
    port, wsdl, check_reg, usa_reg, state, mot_reg, missing, empty, quoted = sys.argv[1:10]
    check, check_usa, ukmot = connect(port, wsdl)

    def run(call):
        try:
            return call()
        except Exception as e:  # what the caller sees is the point of the test, so report every kind
            return failure(e)

    def seen(v):
        return vehicle(v, text_attr)

    out = {
        'check': run(lambda: seen(check(check_reg))),
        'usa': run(lambda: seen(check_usa(usa_reg, state))),
        'mot': run(lambda: mot(ukmot(mot_reg))),
        'missing': run(lambda: {'unexpected': seen(check(missing))}),
        'empty': run(lambda: seen(check(empty))),
        'quoted': run(lambda: seen(check(quoted))),
    }
    sys.stdout.write(json.dumps(out))
