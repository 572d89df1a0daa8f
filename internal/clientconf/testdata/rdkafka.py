#!/usr/bin/env python3
"""librdkafka (through confluent-kafka) cases of the client conformance tier.

Run by internal/clientconf's Go tests, one case per invocation:

    rdkafka.py CASE --bootstrap HOST:PORT [case arguments]

Each case prints one JSON object on stdout: what the client saw (values,
offsets, error names), so the Go side checks it and compares it between
sharebench serve and Kafka. An error the client reports is data, printed in
that object; only a broken invocation (a missing argument, no confluent_kafka
module) exits non-zero with the reason on stderr.
"""

import argparse
import json
import sys
import time

try:
    import confluent_kafka as ck
except ImportError as exc:  # the tier fails, naming the install
    sys.exit("rdkafka.py: cannot import confluent_kafka (%s): pip install confluent-kafka==2.16.1" % exc)

# DEADLINE_S bounds every loop that waits for records: a client that never
# gets them ends the case with what it saw instead of hanging the tier.
DEADLINE_S = 60


def err_name(err):
    """The Kafka error's name (PRODUCER_FENCED, _FENCED, ...), or None."""
    if err is None:
        return None
    if isinstance(err, ck.KafkaException):
        err = err.args[0]
    return err.name()


def base(args, **extra):
    conf = {"bootstrap.servers": args.bootstrap, "client.id": "sharebench-clientconf"}
    conf.update(extra)
    return conf


def idempotent(args):
    """An idempotent producer: every delivery report, its partition and offset."""
    p = ck.Producer(base(args, **{"enable.idempotence": True, "acks": "all"}))
    reports = []

    def on_delivery(err, msg):
        reports.append({"error": err_name(err), "partition": msg.partition(), "offset": msg.offset()})

    for i in range(args.count):
        p.produce(args.topic, key=b"k%d" % i, value=b"idem-%d" % i, partition=0, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(DEADLINE_S)
    return {
        "undelivered": left,
        "errors": sorted({r["error"] for r in reports if r["error"]}),
        "offsets": [r["offset"] for r in reports if not r["error"]],
    }


def rpw(args):
    """Read-process-write: consume --input read_committed in group --group,
    produce "out-<value>" to --output and commit the consumed offsets with
    send_offsets_to_transaction, one transaction per poll."""
    c = ck.Consumer(base(args, **{
        "group.id": args.group, "isolation.level": "read_committed",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    }))
    p = ck.Producer(base(args, **{"transactional.id": args.txn_id}))
    p.init_transactions(DEADLINE_S)
    c.subscribe([args.input])
    consumed, txns, errors = 0, 0, []
    deadline = time.monotonic() + DEADLINE_S
    while consumed < args.count and time.monotonic() < deadline:
        msgs = [m for m in c.consume(num_messages=10, timeout=1.0) if m is not None]
        bad = [m for m in msgs if m.error()]
        errors += [err_name(m.error()) for m in bad]
        msgs = [m for m in msgs if not m.error()]
        if not msgs:
            continue
        try:
            p.begin_transaction()
            for m in msgs:
                p.produce(args.output, key=m.key(), value=b"out-" + m.value())
            p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), DEADLINE_S)
            p.commit_transaction(DEADLINE_S)
        except ck.KafkaException as exc:
            errors.append(err_name(exc))
            break
        consumed += len(msgs)
        txns += 1
    c.close()
    return {"consumed": consumed, "transactions_committed": txns > 0, "errors": errors}


def read_committed(args):
    """A read_committed consumer over every partition of --topic from the
    beginning, to the end of each (enable.partition.eof)."""
    c = ck.Consumer(base(args, **{
        "group.id": args.group, "isolation.level": "read_committed",
        "enable.auto.commit": False, "enable.partition.eof": True,
    }))
    md = c.list_topics(args.topic, timeout=DEADLINE_S)
    parts = sorted(md.topics[args.topic].partitions)
    c.assign([ck.TopicPartition(args.topic, p, ck.OFFSET_BEGINNING) for p in parts])
    at_eof, records, errors = set(), [], []
    deadline = time.monotonic() + DEADLINE_S
    while len(at_eof) < len(parts) and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            if m.error().code() == ck.KafkaError._PARTITION_EOF:
                at_eof.add(m.partition())
            else:
                errors.append(err_name(m.error()))
            continue
        records.append({"partition": m.partition(), "offset": m.offset(), "value": m.value().decode()})
    c.close()
    return {"records": records, "eof_partitions": sorted(at_eof), "errors": errors}


def share(args):
    """The share consumer confluent-kafka ships (confluent_kafka.ShareConsumer),
    in explicit acknowledgement: every record accepted, then commit_sync."""
    c = ck.ShareConsumer(base(args, **{"group.id": args.group, "share.acknowledgement.mode": "explicit"}))
    c.subscribe([args.topic])
    values, errors, commit_errors = [], [], []
    deadline = time.monotonic() + DEADLINE_S
    while len(values) < args.count and time.monotonic() < deadline:
        for m in c.poll(1.0):
            if m.error():
                errors.append(err_name(m.error()))
                continue
            values.append(m.value().decode())
            c.acknowledge(m)
        for tp, e in (c.commit_sync(DEADLINE_S) or {}).items():
            if e is not None:
                commit_errors.append(err_name(e))
    c.close()
    return {"values": sorted(values), "errors": errors, "commit_errors": commit_errors}


def fence(args):
    """Zombie fencing: producer A opens a transaction, producer B starts with
    the same transactional.id and commits; A's commit must fail fenced."""
    conf = base(args, **{"transactional.id": args.txn_id})
    a = ck.Producer(conf)
    a.init_transactions(DEADLINE_S)
    a.begin_transaction()
    a.produce(args.topic, value=b"zombie", partition=0)
    a.flush(DEADLINE_S)
    b = ck.Producer(conf)
    b.init_transactions(DEADLINE_S)
    b.begin_transaction()
    b.produce(args.topic, value=b"winner", partition=0)
    b.commit_transaction(DEADLINE_S)
    out = {"winner_committed": True, "zombie_error": None, "zombie_fatal": False}
    try:
        a.produce(args.topic, value=b"zombie-2", partition=0)
        a.commit_transaction(DEADLINE_S)
    except ck.KafkaException as exc:
        out["zombie_error"] = err_name(exc)
        out["zombie_fatal"] = exc.args[0].fatal()
    return out


def admin(args):
    """The admin client: create --topic with two partitions and a retention.ms
    config, read the topic's partitions and that config back, delete it."""
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    a = AdminClient(base(args))
    out = {"create_error": None, "partitions": None, "retention_ms": None, "delete_error": None}
    try:
        a.create_topics([NewTopic(args.topic, 2, 1, config={"retention.ms": "3600000"})])[args.topic].result(DEADLINE_S)
    except ck.KafkaException as exc:
        out["create_error"] = err_name(exc)
        return out
    md = a.list_topics(args.topic, timeout=DEADLINE_S).topics[args.topic]
    out["partitions"] = sorted(md.partitions) if md.error is None else err_name(md.error)
    res = ConfigResource(ConfigResource.Type.TOPIC, args.topic)
    try:
        entries = a.describe_configs([res])[res].result(DEADLINE_S)
        out["retention_ms"] = entries["retention.ms"].value if "retention.ms" in entries else None
    except ck.KafkaException as exc:
        out["retention_ms"] = "error " + err_name(exc)
    try:
        a.delete_topics([args.topic])[args.topic].result(DEADLINE_S)
    except ck.KafkaException as exc:
        out["delete_error"] = err_name(exc)
    return out


CASES = {"admin": admin, "idempotent": idempotent, "rpw": rpw, "read-committed": read_committed, "share": share, "fence": fence}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic")
    ap.add_argument("--input")
    ap.add_argument("--output")
    ap.add_argument("--group", default="sharebench-clientconf")
    ap.add_argument("--txn-id")
    ap.add_argument("--count", type=int, default=0)
    args = ap.parse_args()
    print(json.dumps(CASES[args.case](args), sort_keys=True))


if __name__ == "__main__":
    main()
