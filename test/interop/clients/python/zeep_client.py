"""Calls the service through a zeep client built from the live WSDL, over one of its ports
(RegSoap, RegSoap12, RegHttpGet, RegHttpPost), and prints what a Python caller sees as JSON.
The calls and the report are interop_report.py's, shared with suds_client.py.

Usage: zeep_client.py PORT WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
"""
import os
import sys

import zeep
import zeep.exceptions

# Run as `python3 zeep_client.py`: find the shared module next to this file, and leave no
# __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop_report  # noqa: E402


class StatusTransport(zeep.Transport):
    """Keeps the HTTP status of the last answer: over the HTTP bindings zeep raises a Fault that
    does not carry it, and the status is what tells an HTTP caller what went wrong."""
    last_status = None

    def post(self, address, message, headers):
        response = super().post(address, message, headers)
        StatusTransport.last_status = response.status_code
        return response

    def get(self, address, params, headers):
        response = super().get(address, params, headers)
        StatusTransport.last_status = response.status_code
        return response


def connect(port, wsdl):
    svc = zeep.Client(wsdl, transport=StatusTransport()).bind('Reg', port)
    # zeep form-encodes an omitted part of an HTTP POST message as the text "None" (README), so
    # the optional UKMOT Model is given as empty there; the other ports omit it.
    optional = {'Model': ''} if port == 'RegHttpPost' else {}
    return (lambda reg: svc.Check(RegistrationNumber=reg, username='demo'),
            lambda reg, state: svc.CheckUSA(RegistrationNumber=reg, State=state, username='demo'),
            lambda reg: svc.UKMOT(RegistrationNumber=reg, username='demo', **optional))


def failure(e):
    if isinstance(e, zeep.exceptions.Fault):
        # Over the HTTP bindings zeep raises a Fault whose message is the raw response body.
        message = e.message.decode('utf-8', 'replace') if isinstance(e.message, bytes) else e.message
        detail = None if e.detail is None else ''.join(e.detail.itertext())
        return {'error': message, 'code': e.code, 'detail': detail, 'status': StatusTransport.last_status}
    if isinstance(e, zeep.exceptions.TransportError):
        body = e.content.decode('utf-8', 'replace') if isinstance(e.content, bytes) else e.content
        return {'error': body, 'code': str(e.status_code), 'exception': e.message}
    return {'exception': '%s: %s' % (type(e).__name__, e)}


if __name__ == '__main__':
    # zeep keeps the text of a simpleContent element with attributes in _value_1.
    interop_report.main(connect, failure, text_attr='_value_1')
