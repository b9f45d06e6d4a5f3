#!/bin/sh
# todo -- a toolhost plugin in POSIX shell: a small persistent to-do list.
#
# One executable, five tools; the host names the tool in TOOLHOST_TOOL and
# passes the arguments as TOOLHOST_ARG_* variables, so no JSON parsing is
# needed (output mode "text": stdout is the result; on failure a message goes
# to stderr and the exit status is 1).
#
# The list is a tab-separated file: $TOOLHOST_TODO_FILE, or else
# $HOME/.local/share/toolhost-todo/todo.tsv (the folder its manifest's sandbox
# lets it write; a list elsewhere needs that folder added to "sandbox"."write"). The first line is a header carrying
# the next id, so ids are never reused; each further line is
#   id <TAB> open|done <TAB> created (YYYY-MM-DD) <TAB> due <TAB> text
# with backslash, tab, newline and carriage return in due and text written as
# \\ \t \n \r. Changes are written to a temporary file and renamed into place
# under a lock directory ($file.lock).

set -u
PROG=todo
MAX_TEXT_BYTES=4000

die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 1
}

# The request JSON on stdin is not needed: read it so the host never writes
# into a closed pipe.
cat >/dev/null 2>&1 || :

tool=${TOOLHOST_TOOL-}
[ -n "$tool" ] || die "TOOLHOST_TOOL is not set; this program is run by toolhost."

file=${TOOLHOST_TODO_FILE-}
if [ -z "$file" ]; then
	[ -n "${HOME-}" ] || die "neither TOOLHOST_TODO_FILE nor HOME is set, so there is no place for the list."
	file=$HOME/.local/share/toolhost-todo/todo.tsv
fi
dir=$(dirname -- "$file")

# ------------------------------------------------------------ arguments

# An id argument: a JSON integer >= 1 (an integral "3.0" is accepted too).
require_id() {
	id=${TOOLHOST_ARG_ID-}
	case $id in
	*.*)
		case ${id#*.} in
		'' | *[!0]*) die "id must be a whole number, not '$id'." ;;
		esac
		id=${id%%.*}
		;;
	esac
	case $id in
	'') die "id is required: the number shown as #N by todoList." ;;
	*[!0-9]*) die "id must be a whole number, not '$id'." ;;
	esac
	id=$((id + 0)) || die "id is out of range."
	[ "$id" -ge 1 ] || die "id must be 1 or more."
}

# A boolean argument given as JSON text; $2 is the default.
boolean() {
	case ${1-} in
	'') printf '%s' "$2" ;;
	true | false) printf '%s' "$1" ;;
	*) die "expected true or false, not '$1'." ;;
	esac
}

is_blank() {
	case $1 in
	*[![:space:]]*) return 1 ;;
	*) return 0 ;;
	esac
}

# ------------------------------------------------------------ storage

locked=0
tmp=
cleanup() {
	[ -z "$tmp" ] || rm -f -- "$tmp"
	[ "$locked" = 0 ] || rmdir -- "$file.lock" 2>/dev/null
	:
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

lock() {
	mkdir -p -- "$dir" || die "cannot create the folder $dir."
	# Wait up to about 6 s, polling at staggered intervals of 0.1-0.3 s so
	# that calls started together do not retry in lockstep. (Fractional
	# sleep is not POSIX; where it fails, fall back to whole seconds.)
	tries=0
	until mkdir -- "$file.lock" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -le 30 ] || die "the list is busy ($file.lock exists); try again in a moment. If no other call is running, remove that folder."
		sleep "0.$((($$ + tries) % 3 + 1))" 2>/dev/null || sleep 1
	done
	locked=1
}

# Runs the awk program below for operation $1 and prints its message.
# Changing operations write the new list to a temporary file first.
run() {
	op=$1
	src=$file
	[ -e "$file" ] || src=/dev/null
	out=
	if [ "$op" != list ]; then
		tmp=$file.tmp.$$
		out=$tmp
	fi
	msg=$(LC_ALL=C awk -v op="$op" -v id="${id-0}" -v flag="${flag-false}" \
		-v today="$(date +%Y-%m-%d)" -v out="$out" -v path="$file" "$AWK_PROGRAM" "$src")
	status=$?
	case $status in
	0) ;;
	3) die "$msg" ;;
	*) die "${msg:-the list could not be processed (awk exited with status $status).}" ;;
	esac
	if [ -n "$out" ] && [ -e "$out" ]; then
		mv -f -- "$out" "$file" || die "cannot write $file."
		tmp=
	fi
	printf '%s\n' "$msg"
}

# shellcheck disable=SC2016 # awk program, not shell expansions
AWK_PROGRAM='
function esc(s,    r, i, c) {
	r = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") r = r "\\\\"
		else if (c == "\t") r = r "\\t"
		else if (c == "\n") r = r "\\n"
		else if (c == "\r") r = r "\\r"
		else r = r c
	}
	return r
}
function unesc(s,    r, i, c) {
	r = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" && i < length(s)) {
			c = substr(s, ++i, 1)
			if (c == "t") c = "\t"
			else if (c == "n") c = "\n"
			else if (c == "r") c = "\r"
		}
		r = r c
	}
	return r
}
# One item for people: "#3 [ ] text (due Friday)", continuation lines indented.
function show(k,    t, line) {
	t = unesc(text[k])
	gsub(/\n/, "\n      ", t)
	line = "#" ids[k] " [" (state[k] == "done" ? "x" : " ") "] " t
	if (due[k] != "") line = line " (due " unesc(due[k]) ")"
	return line
}
function find(want,    k) {
	for (k = 1; k <= n; k++) if (ids[k] + 0 == want + 0) return k
	return 0
}
function save(    k) {
	printf "#toolhost-todo\t1\tnext\t%d\n", next_id > out
	for (k = 1; k <= n; k++)
		if (!(k in gone))
			printf "%s\t%s\t%s\t%s\t%s\n", ids[k], state[k], created[k], due[k], text[k] > out
	if (close(out) != 0) { print "cannot write " out; exit 2 }
}
BEGIN { FS = "\t"; next_id = 1; n = 0; bad = 0 }
NR == 1 {
	if ($1 != "#toolhost-todo" || $3 != "next" || $4 !~ /^[0-9]+$/) { bad = NR; exit }
	next_id = $4 + 0
	next
}
NF != 5 || $1 !~ /^[0-9]+$/ || ($2 != "open" && $2 != "done") { bad = NR; exit }
{ n++; ids[n] = $1; state[n] = $2; created[n] = $3; due[n] = $4; text[n] = $5 }
END {
	if (bad) { print path " is not a toolhost to-do list (line " bad "); not touching it."; exit 2 }
	if (op == "add") {
		n++; ids[n] = next_id++; state[n] = "open"; created[n] = today
		due[n] = esc(ENVIRON["TODO_DUE"]); text[n] = esc(ENVIRON["TODO_TEXT"])
		save()
		print "Added " show(n)
	} else if (op == "list") {
		open_count = 0; done_count = 0; shown = 0
		for (k = 1; k <= n; k++) {
			if (state[k] == "done") done_count++; else open_count++
			if (state[k] == "open" || flag == "true") { print show(k); shown++ }
		}
		if (n == 0) print "The to-do list is empty."
		else if (shown == 0) print "No open items (" done_count " done; set includeDone to see them)."
		else print open_count " open, " done_count " done."
	} else if (op == "done") {
		k = find(id)
		if (!k) { print "there is no to-do item #" id "; todoList shows the ids."; exit 3 }
		if (state[k] == "done") { print "Already done: " show(k); exit 0 }
		state[k] = "done"
		save()
		print "Done: " show(k)
	} else if (op == "remove") {
		k = find(id)
		if (!k) { print "there is no to-do item #" id "; todoList shows the ids."; exit 3 }
		gone[k] = 1
		save()
		print "Removed " show(k)
	} else if (op == "clear") {
		removed = 0
		for (k = 1; k <= n; k++)
			if (flag != "true" || state[k] == "done") { gone[k] = 1; removed++ }
		if (removed > 0) save()
		print "Removed " removed " item" (removed == 1 ? "" : "s") (flag == "true" ? " marked done" : "") "; " (n - removed) " left."
	}
}
'

# ------------------------------------------------------------ tools

case $tool in
todoAdd)
	TODO_TEXT=${TOOLHOST_ARG_TEXT-}
	TODO_DUE=${TOOLHOST_ARG_DUE-}
	is_blank "$TODO_TEXT" && die "text is empty; say what needs doing."
	is_blank "$TODO_DUE" && TODO_DUE=
	[ "${#TODO_TEXT}" -le "$MAX_TEXT_BYTES" ] || die "text is too long (over $MAX_TEXT_BYTES bytes)."
	export TODO_TEXT TODO_DUE
	lock
	run add
	;;
todoList)
	flag=$(boolean "${TOOLHOST_ARG_INCLUDE_DONE-}" false) || exit 1
	run list
	;;
todoDone)
	require_id
	lock
	run 'done'
	;;
todoRemove)
	require_id
	lock
	run remove
	;;
todoClear)
	flag=$(boolean "${TOOLHOST_ARG_ONLY_DONE-}" false) || exit 1
	lock
	run clear
	;;
*)
	die "unknown tool '$tool'; this plugin provides todoAdd, todoList, todoDone, todoRemove and todoClear."
	;;
esac
