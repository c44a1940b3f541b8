#!/bin/sh
# The multi-node path on one machine, in full (docs/multinode.md): the point-to-point,
# collective, RMA and sessions C tests and tests/c/multinode, once with every rank its own
# logical node (WEFT_NODES=per-rank: UCX between every pair) and once with the ranks in 2
# logical nodes (WEFT_NODES=2: shared memory inside a node, UCX between them).
#
#   scripts/multinode.sh [--prefix DIR] [-v]     # extra arguments go to tests/run.py
#
# WEFT_MULTINODE_SETS overrides the test names (tests/run.py --only patterns, default
# c/pt2pt,c/coll,c/rma,c/session,c/multinode); UCX_TLS defaults to self,tcp,posix,sysv.
# A manifest's own env=WEFT_NODES=... wins over the one set here. Exit status 1 when any
# test failed under either layout.
cd "$(dirname "$0")/.." || exit 1
sets=${WEFT_MULTINODE_SETS:-c/pt2pt,c/coll,c/rma,c/session,c/multinode}
export UCX_TLS="${UCX_TLS:-self,tcp,posix,sysv}"
status=0
for nodes in per-rank 2; do
    echo "== WEFT_NODES=$nodes UCX_TLS=$UCX_TLS: $sets"
    WEFT_NODES=$nodes python3 tests/run.py --only "$sets" "$@" || status=1
done
exit $status
