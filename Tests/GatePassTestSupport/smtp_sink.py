#!/usr/bin/python3
"""A test SMTP sink for the mail and server tests (Debian's python3-aiosmtpd).

    smtp_sink.py --out DIR --mode starttls|plain|smtps --user U --password P [--port N]
    smtp_sink.py --describe FILE.eml

Listens on 127.0.0.1 on a free port (or N: a sink started again where it was stopped) and
prints `listening on 127.0.0.1:PORT` as its first line. For starttls and smtps it first makes
a test CA and a server certificate for 127.0.0.1 with openssl in DIR (DIR/ca.pem is the CA the
client trusts), or keeps the ones a sink before it made there. AUTH is required (PLAIN/LOGIN
with U and P; over TLS only, except in plain mode, which offers no STARTTLS at all).

Records to DIR:
  conversation.log   every command verb (C: ...) and reply (S: ...), flushed per line;
                     AUTH arguments and continuation lines are never written
  message-N.eml      each message as received (after DATA), then
  (RCPT TO:<rejected@…> is answered 550, for the tests of a refused recipient)
  message-N.json     its envelope and MIME structure as Python's email package parses it;
                     written last, by rename, so its presence means the message is complete
                     (numbers go on from the messages already in DIR)

--describe prints that JSON (without the envelope) for an .eml file, such as one written by
`gatepass serve --dev` to its mail folder.
"""
import argparse
import asyncio
import base64
import json
import os
import ssl
import subprocess
import sys
from email import message_from_bytes, policy

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

args = None
log_file = None
message_count = 0


def log(line):
    log_file.write(line + "\n")
    log_file.flush()


def make_certificates(directory):
    if os.path.exists(os.path.join(directory, "server.pem")):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
        return context

    def openssl(*arguments):
        subprocess.run(["openssl", *arguments], cwd=directory, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
            "-subj", "/CN=Gate Pass Mail Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(directory, "server.ext"), "w") as ext:
        ext.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "server.ext")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
    return context


def describe(message):
    parts = []
    for part in message.walk():
        entry = {
            "contentType": part.get_content_type(),
            "disposition": part.get_content_disposition(),
            "filename": part.get_filename(),
            "contentID": part.get("Content-ID"),
            "charset": part.get_content_charset(),
            "method": part.get_param("method"),
        }
        if not part.is_multipart():
            entry["payloadBase64"] = base64.b64encode(part.get_payload(decode=True) or b"").decode()
        parts.append(entry)
    defects = [type(d).__name__ for part in message.walk() for d in part.defects]
    return {
        "headerNames": list(message.keys()),
        "subject": str(message["Subject"]),
        "from": str(message["From"]),
        "to": str(message["To"]),
        "date": str(message["Date"]),
        "messageID": str(message["Message-ID"]),
        "parts": parts,
        "defects": defects,
    }


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # A recipient the tests use to see a refusal at RCPT.
        if address.startswith("rejected@"):
            # Echoing the address, as Postfix does ("<a@b>: Recipient address rejected").
            return "550 5.1.1 <%s>: Recipient address rejected: No such mailbox here" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        global message_count
        message_count += 1
        base = os.path.join(args.out, "message-%d" % message_count)
        with open(base + ".eml", "wb") as eml:
            eml.write(envelope.content)
        record = describe(message_from_bytes(envelope.content, policy=policy.default))
        record["mailFrom"] = envelope.mail_from
        record["recipients"] = envelope.rcpt_tos
        with open(base + ".json.tmp", "w") as tmp:
            json.dump(record, tmp)
        os.rename(base + ".json.tmp", base + ".json")
        return "250 Message accepted"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword)
          and auth_data.login == args.user.encode() and auth_data.password == args.password.encode())
    # handled=False: aiosmtpd then answers 535 itself (with the default, True, it answers nothing).
    return AuthResult(success=ok, handled=False)


class RecordingSMTP(SMTP):
    async def push(self, status):
        log("S: " + (status.decode(errors="replace") if isinstance(status, bytes) else status))
        return await super().push(status)

    def connection_made(self, transport):
        log("-- TLS" if transport.get_extra_info("sslcontext") else "-- connection")
        return super().connection_made(transport)


def recorded(verb):
    async def handler(self, arg):
        # AUTH's argument carries the credentials: only the mechanism is written.
        shown = (arg or "").split(" ")[0] if verb == "AUTH" else (arg or "")
        log(("C: %s %s" % (verb, shown)).rstrip())
        return await getattr(SMTP, "smtp_" + verb)(self, arg)
    return handler


for verb in ["EHLO", "HELO", "STARTTLS", "AUTH", "MAIL", "RCPT", "DATA", "QUIT", "NOOP", "RSET", "VRFY", "HELP"]:
    setattr(RecordingSMTP, "smtp_" + verb, recorded(verb))


async def main():
    global log_file, message_count
    os.makedirs(args.out, exist_ok=True)
    message_count = len([name for name in os.listdir(args.out) if name.startswith("message-") and name.endswith(".json")])
    log_file = open(os.path.join(args.out, "conversation.log"), "a")
    context = make_certificates(args.out) if args.mode in ("starttls", "smtps") else None

    def factory():
        return RecordingSMTP(
            Handler(),
            hostname="sink.test",
            tls_context=context if args.mode == "starttls" else None,
            require_starttls=args.mode == "starttls",
            auth_required=True,
            auth_require_tls=args.mode == "starttls",
            authenticator=authenticator,
        )

    loop = asyncio.get_running_loop()
    server = await loop.create_server(factory, "127.0.0.1", args.port, ssl=context if args.mode == "smtps" else None)
    port = server.sockets[0].getsockname()[1]
    print("listening on 127.0.0.1:%d" % port, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--describe":
        with open(sys.argv[2], "rb") as eml:
            json.dump(describe(message_from_bytes(eml.read(), policy=policy.default)), sys.stdout)
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=["starttls", "plain", "smtps"], default="starttls")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
