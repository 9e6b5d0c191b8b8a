#!/usr/bin/env bash
# Lead's second sampling call (session 23, issue 31): call `sample`'s steps again
# (notes/session23-lead-sample.sh), on the GPU call `final` had just used. Run as
# `OUT=/tmp/sample23b DEADLINE_S=120 bash notes/session23-lead-sample2.sh` (carry .gpu-verify23).
exec bash "$(dirname "$0")/session23-lead-sample.sh"
