"""Calls the service through a suds client built from the live WSDL and prints what a Python
caller sees, as JSON. suds offers the SOAP ports only (see README). The calls and the report are
interop_report.py's, shared with zeep_client.py.

Usage: suds_client.py PORT WSDL_URL CHECK_REG USA_REG USA_STATE MOT_REG MISSING_REG EMPTY_REG QUOTED_REG
"""
import os
import sys

import suds
import suds.client

# Run as `python3 suds_client.py`: find the shared module next to this file, and leave no
# __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop_report  # noqa: E402
from interop_report import child  # noqa: E402


def connect(port, wsdl):
    svc = suds.client.Client(wsdl, cache=None).service[port]
    return (lambda reg: svc.Check(reg, 'demo'),
            lambda reg, state: svc.CheckUSA(reg, state, 'demo'),
            lambda reg: svc.UKMOT(reg, None, 'demo'))


def failure(e):
    if isinstance(e, suds.WebFault):
        detail = child(child(e.fault, 'detail'), 'ErrorCode')
        return {'error': str(e.fault.faultstring), 'code': str(e.fault.faultcode), 'detail': None if detail is None else str(detail)}
    return {'exception': '%s: %s' % (type(e).__name__, e)}


if __name__ == '__main__':
    # suds gives simpleContent with an attribute as an object whose text is in .value.
    interop_report.main(connect, failure, text_attr='value')
