#!/usr/bin/env python3
"""Reads a /metrics page with Prometheus's own parser (prometheus-client, from PyPI).

    scrape.py URL    prints one line per sample: name{label="value",...} value   (labels sorted)
"""
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
for family in text_string_to_metric_families(text):
    for s in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
        print(f"{s.name}{{{labels}}} {s.value}")
