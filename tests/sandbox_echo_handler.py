"""A minimal request handler for the sandbox tests.

Requests:
    {"call": name, "args": [...]}  -> {"result": ns[name](*args)}
    {"get": name}                  -> {"result": ns[name]}
    {"echo": true} + blobs         -> the same header and blobs back
    {"big": n}                     -> one blob of n bytes
"""


def serve(ns, header, blobs):
    if "call" in header:
        return {"result": ns[header["call"]](*header.get("args", []))}, []
    if "get" in header:
        return {"result": ns[header["get"]]}, []
    if header.get("echo"):
        return dict(header), list(blobs)
    if "big" in header:
        return {"size": header["big"]}, [b"\0" * header["big"]]
    raise ValueError(f"unknown request {sorted(header)}")
