# Sourced by the scripts that leave daemons behind (dev-postgres, auto-failover).
#
# A daemon keeps every descriptor it inherits. A parent may watch a descriptor it handed one of
# these scripts to learn that the script exited (Foundation's Process does: a socket, seen closed
# once every copy of it is). Were PostgreSQL or a keeper to hold a copy, the parent would wait for
# the daemon's whole life. So a command that leaves a daemon behind runs through `detached`,
# which runs it with no descriptor but 0, 1 and 2. The script keeps its own copies until it exits:
# closing them at its start would tell the parent it had ended while it still ran, and
# Foundation's Process then waits for it on the one thread that sees every child's exit, so that
# no other child of that process is seen to end until this script does.
detached() {
  (
    if [ -d "/proc/$BASHPID/fd" ]; then
      for fd in /proc/"$BASHPID"/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
      done
    fi
    "$@"
  )
}
