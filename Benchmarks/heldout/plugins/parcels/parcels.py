#!/usr/bin/env python3
"""Held-out eval plugin: trackParcel -- where a parcel is, from a made-up carrier feed.

Reads one toolhost request on stdin, writes one reply object on stdout. The feed is the table below (invented
parcels, plausible numbers); nothing touches the network. Standard library only.
"""

import difflib
import json
import re
import sys

# tracking number -> carrier, status, expected delivery, scans (oldest first: time, place, event).
PARCELS = {
    "1Z999AA10123456784": ("UPS", "in_transit", "2026-12-01", [
        ("2026-11-25T17:40:00-05:00", "Newark, NJ, US", "Picked up"),
        ("2026-11-26T03:15:00-05:00", "Secaucus, NJ, US", "Departed facility"),
        ("2026-11-27T22:05:00-05:00", "Louisville, KY, US", "Arrived at hub"),
        ("2026-11-28T06:12:00-05:00", "Louisville, KY, US", "Departed hub"),
    ]),
    "1Z4F83W20398761130": ("UPS", "delivered", "2026-11-26", [
        ("2026-11-23T15:02:00-08:00", "Sacramento, CA, US", "Picked up"),
        ("2026-11-25T09:44:00-08:00", "Portland, OR, US", "Arrived at facility"),
        ("2026-11-26T14:03:00-08:00", "Portland, OR, US", "Delivered, front door"),
    ]),
    "774930215568": ("FedEx", "out_for_delivery", "2026-11-29", [
        ("2026-11-26T19:20:00-06:00", "Memphis, TN, US", "Shipment picked up"),
        ("2026-11-27T23:58:00-06:00", "Memphis, TN, US", "Left FedEx hub"),
        ("2026-11-28T21:10:00-07:00", "Denver, CO, US", "At local FedEx facility"),
        ("2026-11-29T07:35:00-07:00", "Denver, CO, US", "On FedEx vehicle for delivery"),
    ]),
    "5629384710": ("DHL Express", "held_at_customs", "2026-12-03", [
        ("2026-11-24T11:00:00+08:00", "Hong Kong, HK", "Shipment picked up"),
        ("2026-11-26T02:30:00+01:00", "Leipzig, DE", "Arrived at DHL hub"),
        ("2026-11-27T09:05:00+01:00", "Leipzig, DE", "Held by customs: import duties of EUR 18.40 to pay"),
    ]),
    "JJD000390007812345678": ("DHL Paket", "in_transit", "2026-11-30", [
        ("2026-11-27T16:45:00+01:00", "Hamburg, DE", "Handed to DHL"),
        ("2026-11-28T04:10:00+01:00", "Hannover, DE", "Processed at parcel centre"),
    ]),
    "9400111899223344556677": ("USPS", "delivered", "2026-11-27", [
        ("2026-11-24T10:12:00-06:00", "Austin, TX, US", "Accepted at USPS origin facility"),
        ("2026-11-26T05:50:00-06:00", "Dallas, TX, US", "Arrived at regional facility"),
        ("2026-11-27T13:27:00-06:00", "Plano, TX, US", "Delivered, in mailbox"),
    ]),
    "RM123456785GB": ("Royal Mail", "awaiting_collection", None, [
        ("2026-11-25T18:00:00+00:00", "Glasgow Mail Centre, GB", "Posted"),
        ("2026-11-27T07:40:00+00:00", "Bristol Delivery Office, GB", "Delivery attempted, card left"),
        ("2026-11-27T12:15:00+00:00", "Bristol, 14 Corn Street Post Office, GB", "Ready to collect until 2026-12-15"),
    ]),
    "3SABCD1234567": ("PostNL", "in_transit", "2026-11-30", [
        ("2026-11-28T20:30:00+01:00", "Utrecht, NL", "Received by PostNL"),
        ("2026-11-29T01:55:00+01:00", "Nieuwegein, NL", "Sorted at sorting centre"),
    ]),
    "6A12345678901": ("La Poste Colissimo", "delivery_attempted", "2026-12-01", [
        ("2026-11-26T14:00:00+01:00", "Marseille, FR", "Parcel handed to La Poste"),
        ("2026-11-28T10:20:00+01:00", "Lyon, FR", "Delivery attempted, recipient absent; new attempt on 2026-12-01"),
    ]),
    "LX998877665CN": ("China Post", "in_transit", "2026-12-09", [
        ("2026-11-22T09:00:00+08:00", "Shenzhen, CN", "Accepted"),
        ("2026-11-26T23:40:00+08:00", "Shenzhen, CN", "Departed country of origin"),
    ]),
}

STATUS_TEXT = {
    "in_transit": "In transit",
    "delivered": "Delivered",
    "out_for_delivery": "Out for delivery",
    "held_at_customs": "Held at customs",
    "awaiting_collection": "Awaiting collection",
    "delivery_attempted": "Delivery attempted",
}


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def track_parcel(args):
    raw = args.get("trackingNumber")
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError("trackingNumber must be a non-empty string.", "invalid_arguments")
    number = re.sub(r"[\s-]", "", raw).upper()
    if number not in PARCELS:
        close = difflib.get_close_matches(number, list(PARCELS), n=3, cutoff=0.75)
        if close:
            hint = "Did you mean " + " or ".join(close) + "?"
        else:
            hint = "The feed knows these tracking numbers: " + ", ".join(sorted(PARCELS)) + "."
        raise ToolError(f"No parcel with tracking number {number}. {hint}", "unknown_tracking_number",
                        {"suggestions": close, "known": sorted(PARCELS)})
    carrier, status, expected, scans = PARCELS[number]
    last_time, last_place, last_event = scans[-1]
    result = {
        "trackingNumber": number,
        "carrier": carrier,
        "status": status,
        "statusText": STATUS_TEXT[status],
        "lastEvent": last_event,
        "lastLocation": last_place,
        "lastUpdate": last_time,
        "expectedDelivery": expected,
    }
    text = f"{number} ({carrier}): {STATUS_TEXT[status]} — {last_event}, {last_place}, {last_time[:16].replace('T', ' ')}"
    if status == "delivered":
        text += "."
    elif expected:
        text += f"; expected delivery {expected}."
    else:
        text += "."
    if args.get("includeHistory", False):
        result["history"] = [{"time": t, "location": p, "event": e} for t, p, e in scans]
        text += "\n" + "\n".join(f"  {t[:16].replace('T', ' ')}  {p}: {e}" for t, p, e in scans)
    return result, text


TOOLS = {"trackParcel": track_parcel}


def main():
    try:
        try:
            request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ToolError(f"The request on stdin is not JSON ({e}).", "bad_request") from e
        if not isinstance(request, dict) or not isinstance(request.get("arguments"), dict):
            raise ToolError("The request has no arguments object.", "bad_request")
        handler = TOOLS.get(request.get("tool"))
        if handler is None:
            raise ToolError(f"This plugin has no tool named {request.get('tool')!r}.", "unknown_tool")
        result, text = handler(request["arguments"])
        reply, status = {"result": result, "text": text}, 0
    except ToolError as e:
        error = {"message": e.message, "code": e.code}
        if e.data is not None:
            error["data"] = e.data
        reply, status = {"error": error}, 1
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
