# Sourced by the scripts that make a Debian root: debian_mirror prints the Debian mirror this
# machine's own apt sources name (the only one reachable here), deb.debian.org when none does.
debian_mirror() {
  local f mirror=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    mirror=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' "$f")
    [[ -n "$mirror" ]] && break
  done
  if [[ -z "$mirror" && -f /etc/apt/sources.list ]]; then
    mirror=$(awk '$1 == "deb" && $3 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
  fi
  echo "${mirror:-http://deb.debian.org/debian}"
}
