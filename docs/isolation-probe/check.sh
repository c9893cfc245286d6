#!/bin/sh
# What Swift (language mode 6) accepts and rejects for a coordinator owned by one actor on the
# loop's executor (issue 27). Each variant compiles common.swift with one probe file and one
# -D flag through SIL (region-based isolation runs there: -typecheck alone misses it).
# Usage: docs/isolation-probe/check.sh   (from anywhere; writes nothing but /tmp files)
cd "$(dirname "$0")" || exit 1
probe() { # file flag(s)...
    file=$1; shift
    flags=""; for f in "$@"; do flags="$flags -D $f"; done
    out=$(swiftc -swift-version 6 -emit-sil -wmo -module-name Probe $flags common.swift "$file" -o /dev/null 2>&1 | grep -E "error:" | sed -E 's/^.*error: //' | sort -u)
    printf '%-18s %s\n' "$file $*" "${out:-accepted}"
}
probe a_core.swift A0
probe a_core.swift A1
probe a_core.swift A2
probe a_core.swift A3
probe a_core.swift A4
probe a_core.swift A5
probe a_core.swift A6
probe b_core.swift B1
probe b_core.swift B2
probe b_core.swift B3
probe b_core.swift B4
probe b_core.swift B5
probe b_core.swift B1 B6
probe b_core.swift B1 B7
probe c_entry.swift C1
probe c_entry.swift C2
probe c_entry.swift C3
probe c_entry.swift C4
probe e_facade.swift E0
probe e_facade.swift E1
probe e_facade.swift E2
probe e_facade.swift E3
probe e_facade.swift E4
probe f_sendable_cb.swift F1
probe f_sendable_cb.swift F2
# At run time: an actor-isolated closure stored in an @unchecked Sendable handle and called
# off the actor is not checked (d_runtime prints instead of trapping).
swiftc -swift-version 6 -parse-as-library d_runtime.swift -o /tmp/isolation-probe-d 2>&1 | grep error: || /tmp/isolation-probe-d
