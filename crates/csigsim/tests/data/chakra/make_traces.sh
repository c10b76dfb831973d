#!/bin/sh
# Regenerates the Chakra execution traces of the tests and of the shipped
# scenario with the mlc-chakra package's own text converter (the ASTRA-sim
# text description of a model, turned into one .et file per rank):
#
#   python3 -m venv venv && venv/bin/pip install mlc-chakra==1.0.0
#   PATH=venv/bin:$PATH sh make_traces.sh
#
# Run from this directory. The Rust tests read the files it writes and
# need no Python.
set -eu
here=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Data-parallel training: per layer, forward compute, then backward
# weight-gradient compute, its all-reduce (4 MiB) and input-gradient
# compute. Columns: name, reserved, fwd compute (us), fwd comm type and
# size, input-gradient compute, comm type and size, weight-gradient
# compute, comm type and size, update time.
cat > dp.txt <<'TXT'
DATA
3
layer0 -1 300 NONE 0 500 NONE 0 500 ALLREDUCE 4194304 10
layer1 -1 300 NONE 0 500 NONE 0 500 ALLREDUCE 4194304 10
layer2 -1 300 NONE 0 500 NONE 0 500 ALLREDUCE 4194304 10
TXT
# One all-reduce of 1 MiB and nothing else (the converter's MICRO mode).
cat > ar.txt <<'TXT'
MICRO
1
grad -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 1048576 0
TXT
# The shipped scenario: two layers, smaller all-reduces, two iterations.
cat > small.txt <<'TXT'
DATA
2
layer0 -1 20 NONE 0 30 NONE 0 30 ALLREDUCE 262144 5
layer1 -1 20 NONE 0 30 NONE 0 30 ALLREDUCE 262144 5
TXT

convert() { # input, output directory, prefix, ranks, passes
  mkdir -p "$2"
  chakra_converter --log-filename /dev/null Text --input "$1" --output "$2/$3" --num-npus "$4" --num-passes "$5"
}
convert dp.txt dp8 dp 8 3
convert dp.txt dp64 dp 64 3
convert ar.txt allreduce16 ar 16 1
convert small.txt small16 dp 16 2

rm -rf "$here/dp8" "$here/dp64" "$here/allreduce16"
cp -r dp8 dp64 allreduce16 "$here/"
rm -rf "$here/../../../../../scenarios/chakra_data_parallel"
cp -r small16 "$here/../../../../../scenarios/chakra_data_parallel"
