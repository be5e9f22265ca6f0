#!/usr/bin/env python3
"""alloc_server.py - a loopback HTTP server serving awards, for test_alloc_url.

Usage: alloc_server.py AWARDS_FILE DEMO_FILE
Listens on 127.0.0.1 on a free port and prints the port on its first line of output.
GET /awards (AWARDS_FILE) and /demo (DEMO_FILE, the demo's awards) answer as the current
mode says; GET /mode/NAME sets it:
  good     the file (200)
  late     the awards after 3 s (past the test's timeout of 1 s)
  broken   200 with text that is not JSON
  invalid  200 with JSON that is not an allocations file (an award without amount)
  large    200 with 5 MiB (past slurm-report's cap of 4 MiB)
  401, 403 refused
  auth     the awards when the request says "Authorization: Bearer s3cret-token" or basic
           user "alice" with password "pa:ss@word", else 401
GET /last-auth answers the Authorization header of the last request of awards ("" if none).
"""
import http.server
import os
import sys
import time

FILES = {"/awards": open(sys.argv[1], "rb").read(), "/demo": open(sys.argv[2], "rb").read()}
STATE = {"mode": "good", "auth": ""}
BASIC = "Basic YWxpY2U6cGE6c3NAd29yZA=="  # alice:pa:ss@word


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        if self.path.startswith("/mode/"):
            STATE["mode"] = self.path[len("/mode/"):]
            return self.answer(200, b"ok\n", "text/plain")
        if self.path == "/last-auth":
            return self.answer(200, STATE["auth"].encode(), "text/plain")
        AWARDS = FILES.get(self.path.split("?")[0])
        if AWARDS is None:
            return self.answer(404, b"not found\n", "text/plain")
        STATE["auth"] = self.headers.get("Authorization", "")
        mode = STATE["mode"]
        if mode == "late":
            time.sleep(3)
            return self.answer(200, AWARDS)
        if mode == "broken":
            return self.answer(200, b"<html>upstream error</html>\n", "text/html")
        if mode == "invalid":
            return self.answer(200, b'{"awards": [{"cluster": "demo", "account": "bio", "unit": "gpu-years",'
                                    b' "start": "2026-07-01", "end": "2027-07-01"}]}')
        if mode == "large":
            return self.answer(200, b'{"awards": [' + b" " * (5 << 20) + b"]}")
        if mode in ("401", "403"):
            return self.answer(int(mode), b'{"error": "no"}')
        if mode == "auth" and STATE["auth"] not in ("Bearer s3cret-token", BASIC):
            return self.answer(401, b'{"error": "who are you"}')
        return self.answer(200, AWARDS)

    def log_message(self, fmt, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
os.write(1, b"%d\n" % server.server_address[1])  # one write: the port, read by the test
server.serve_forever()
