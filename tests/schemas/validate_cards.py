#!/usr/bin/env python3
"""Validates knowledge card files against schemas/knowledge-card.json (draft 2020-12, jsonschema).

  validate_cards.py DIR   every DIR/*.json: {"format_version": "cko/knowledge-cards-v1", "cards": [...]}

Prints "N cards checked in M files, K contracts"; exits 1 on any violation, naming the file, the card
id and the JSON path. Also checks that card ids are unique across files.
"""
import glob
import json
import os
import sys

from jsonschema import Draft202012Validator

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.normpath(os.path.join(HERE, "..", "..", "schemas", "knowledge-card.json"))


def path_text(path):
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def main(directory):
    validator = Draft202012Validator(json.load(open(SCHEMA)))
    bad = 0
    cards = 0
    contracts = 0
    seen = {}
    files = sorted(glob.glob(os.path.join(directory, "*.json")))
    for f in files:
        doc = json.load(open(f))
        if set(doc) != {"format_version", "cards"} or doc["format_version"] != "cko/knowledge-cards-v1":
            print(f"INVALID {f}: expected exactly format_version cko/knowledge-cards-v1 and cards")
            bad += 1
            continue
        for i, card in enumerate(doc["cards"]):
            cards += 1
            cid = card.get("id", f"cards[{i}]")
            contracts += card.get("kind") == "contract"
            for err in sorted(validator.iter_errors(card), key=lambda e: list(e.path)):
                print(f"INVALID {f}: {cid}: {path_text(err.path)}: {err.message}")
                bad += 1
            if cid in seen:
                print(f"INVALID {f}: {cid}: id already used in {seen[cid]}")
                bad += 1
            seen[cid] = f
    print(f"{cards} cards checked in {len(files)} files, {contracts} contracts")
    return 1 if bad or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
