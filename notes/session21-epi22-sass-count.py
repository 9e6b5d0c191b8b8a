#!/usr/bin/env python3
"""epi22 (session 21): SASS opcodes of an nvdisasm listing counted over line ranges, a value each.

Usage: session21-epi22-sass-count.py LISTING VALUES FIRST-LAST [FIRST-LAST...]; prints the total and
each opcode (its first word) divided by VALUES (the output values the ranges compute a thread)."""
import re,sys,collections
path=sys.argv[1]; per=float(sys.argv[2]); ranges=[tuple(map(int,r.split('-'))) for r in sys.argv[3:]]
c=collections.Counter()
for i,line in enumerate(open(path),1):
    if not any(a<=i<=b for a,b in ranges): continue
    m=re.match(r'\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)',line)
    if m: c[m.group(2)]+=1
tot=sum(c.values()); print(f"total {tot} ({tot/per:.3f}/value)")
for op,n in c.most_common(): print(f"  {op:12s}{n:5d} {n/per:.3f}")
