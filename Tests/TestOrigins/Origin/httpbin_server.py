#!/usr/bin/env python3
"""Serves httpbin (from PyPI) on 127.0.0.1 for the network worker's tests.

Prints the port on its own line on stdout and serves until its standard input closes (so it
never outlives the test process that started it) or it is terminated.
"""
import logging
import os
import sys
import threading

logging.getLogger("werkzeug").setLevel(logging.ERROR)

import httpbin  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402


def exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(1):
            pass
    finally:
        os._exit(0)


server = make_server("127.0.0.1", 0, httpbin.app, threaded=True)
threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
print(server.server_address[1], flush=True)
server.serve_forever()
