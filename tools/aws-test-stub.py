#!/usr/bin/env python3
"""aws-test-stub.py PORT LOG: what tools/aws-test-server needs besides moto, on 127.0.0.1:PORT.

POST /denied answers 403 InvalidClientTokenId, POST /throttled 400 Throttling (AWS's XML error answers of the
Query API); PUT /latest/api/token and GET /latest/meta-data/iam/security-credentials/[ROLE] are IMDSv2 for the
role "sa-test-role" (the GETs need the token). Every request is appended to LOG: method, path, and whether it
carried X-Amz-Security-Token and an AWS4-HMAC-SHA256 Authorization (never their values). Standard library only.
"""
import http.server
import json
import sys

TOKEN = "stub-imds-token"
ROLE = "sa-test-role"
CREDS = {"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": "ASIASTUBROLE",
         "SecretAccessKey": "stub/role/secret+key", "Token": "stub-session-token",
         "Expiration": "2099-01-01T00:00:00Z"}
ERRORS = {
    "/denied": (403, "InvalidClientTokenId", "The security token included in the request is invalid."),
    "/throttled": (400, "Throttling", "Rate exceeded"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def record(self):
        auth = self.headers.get("Authorization", "")
        with open(sys.argv[2], "a") as f:
            f.write("%s %s token=%s sigv4=%s\n" % (self.command, self.path,
                                                   "yes" if self.headers.get("X-Amz-Security-Token") else "no",
                                                   "yes" if auth.startswith("AWS4-HMAC-SHA256 ") else "no"))

    def answer(self, status, body, ctype="text/plain"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.record()
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path in ERRORS:
            status, code, msg = ERRORS[self.path]
            self.answer(status, "<ErrorResponse xmlns=\"http://monitoring.amazonaws.com/doc/2010-08-01/\"><Error>"
                        "<Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error>"
                        "<RequestId>stub</RequestId></ErrorResponse>" % (code, msg), "text/xml")
        else:
            self.answer(404, "not found")

    def do_PUT(self):
        self.record()
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.answer(200, TOKEN)
        else:
            self.answer(400, "bad request")

    def do_GET(self):
        self.record()
        if self.path == "/":
            return self.answer(200, "stub")
        if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
            return self.answer(401, "unauthorized")
        if self.path == "/latest/meta-data/iam/security-credentials/":
            return self.answer(200, ROLE)
        if self.path == "/latest/meta-data/iam/security-credentials/" + ROLE:
            return self.answer(200, json.dumps(CREDS), "application/json")
        self.answer(404, "not found")


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
