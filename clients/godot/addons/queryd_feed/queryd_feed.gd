# SPDX-License-Identifier: MIT
# queryd_feed.gd: feed a game server's state to queryd over its HTTP feed
# ([feed] http, loopback, bearer token), for Godot 3 and Godot 4.
#
# Add it as a node (it works in _process, one poll per frame, never
# waiting): replace() and patch() queue the change (bounded; when the queue
# is full its patches are folded into one replace of the newest state); the
# node connects, sends, pings on a timer and reconnects with backoff.
#
# It keeps two things: the last document queryd accepted (its last accepted
# replace with the patches it accepted since merged in) and the changes not
# answered yet. A change queryd rejects is dropped and reported (the
# "rejected" signal), so it never reaches the accepted document; after each
# (re)connect the accepted document is sent first, then the changes still
# pending, each checked again by queryd. Errors go to the "error" signal
# and, if set, to error_target.call(error_method, message). See README.md.
extends Node

signal error(message)
# A replace or patch queryd rejected: op "replace" or "patch", change the
# JSON sent, reply queryd's answer. It is dropped from the local copy.
signal rejected(op, change, reply)

# The HTTP feed, e.g. "http://127.0.0.1:27017".
var url = "http://127.0.0.1:27017"
# The token: the content of [feed] http_token_file.
var token = ""
# Seconds between keep-alives when nothing else is sent: well under [feed] stale_after.
var ping_every = 10.0
# Reconnect delay in seconds, doubled from backoff_min up to backoff_max.
var backoff_min = 0.1
var backoff_max = 5.0
# Seconds a connect or a request may take.
var timeout = 5.0
# Patches queued; past it the whole state is sent instead.
var max_queue = 64
# An object and method also told of each error (works alike in Godot 3 and 4).
var error_target = null
var error_method = ""
# The method of error_target also told of each rejection: (op, change, reply).
var rejected_method = ""

const _IDLE = 0
const _CONNECTING = 1
const _READY = 2
const _REQUESTING = 3
const _BACKOFF = 4

var _http = HTTPClient.new()
var _state = _IDLE
var _wait = 0.0
var _backoff = 0.1
var _elapsed = 0.0
var _since_sent = 0.0
var _accepted = null  # the last document queryd accepted
var _pending = []  # changes not sent yet, oldest first: {"replace", "doc", "gen", "folded", "id"}
var _sent = null  # the change in flight (its answer not read yet)
var _generation = 0  # replace() calls: a change older than the last replace is superseded
var _ids = 0
var _resync = false  # send the accepted document first
var _ping_now = false
var _inflight = null
var _body = null


# replace sets the whole state (queryd's "replace").
func replace(state):
	_generation += 1
	_pending.clear()  # newest state wins
	_pending.append(_change(true, _merge({}, state), false))


# patch merges an RFC 7386 merge patch (queryd's "patch"): a player joins
# with {"players": {"7": {...}}} and leaves with {"players": {"7": null}}.
func patch(p):
	_pending.append(_change(false, _copy_patch(p), false))
	var patches = 0
	for c in _pending:
		if not c["replace"]:
			patches += 1
	if patches > max_queue:
		_fold()


# accepted returns the last document queryd accepted (null before one), a copy.
func accepted():
	if _accepted == null:
		return null
	return _accepted.duplicate(true)


func _change(is_replace, doc, folded):
	_ids += 1
	return {"replace": is_replace, "doc": doc, "gen": _generation, "folded": folded, "id": _ids}


# _fold turns the pending patches into one replace of the newest state: the
# accepted document with every change not answered yet merged in. A replace
# the game set itself stays ahead of it, so that a rejected fold still
# leaves that one.
func _fold():
	var doc = null
	if _accepted != null:
		doc = _accepted.duplicate(true)
	if _sent != null:
		doc = _apply(doc, _sent)
	for c in _pending:
		doc = _apply(doc, c)
	var own = null
	if _pending.size() > 0 and _pending[0]["replace"] and not _pending[0]["folded"]:
		own = _pending[0]
	_pending.clear()
	if own != null:
		_pending.append(own)
	_pending.append(_change(true, doc, true))


# _apply returns doc (null: none yet) with the change applied.
func _apply(doc, c):
	if c["replace"]:
		return c["doc"].duplicate(true)
	if doc == null:
		doc = {}
	return _merge(doc, c["doc"])


# ping asks for a keep-alive now (one is also sent every ping_every seconds).
func ping():
	_ping_now = true


# is_connected_to_queryd tells whether the node holds a connection now.
func is_connected_to_queryd():
	return _state == _READY or _state == _REQUESTING


func _process(delta):
	poll(delta)


# poll advances the connection by one step; _process calls it every frame.
func poll(delta):
	_since_sent += delta
	_elapsed += delta
	if _state == _IDLE:
		_connect()
	elif _state == _BACKOFF:
		_wait -= delta
		if _wait <= 0:
			_connect()
	elif _state == _CONNECTING:
		_http.poll()
		var st = _http.get_status()
		if st == HTTPClient.STATUS_CONNECTED:
			_state = _READY
			_backoff = backoff_min
			_resync = true  # queryd may have restarted: send what it accepted, then the rest
		elif st != HTTPClient.STATUS_RESOLVING and st != HTTPClient.STATUS_CONNECTING:
			_fail("cannot connect to %s (HTTPClient status %d)" % [url, st])
		elif _elapsed > timeout:
			_fail("connecting to %s took more than %s s" % [url, timeout])
	elif _state == _READY:
		_http.poll()
		if _http.get_status() != HTTPClient.STATUS_CONNECTED:
			_fail("connection to %s lost" % url)
			return
		var m = _next()
		if m != null:
			_send(m)
	elif _state == _REQUESTING:
		_receive()


func _connect():
	_http.close()
	var hp = url.replace("http://", "").split("/")[0].split(":")
	var port = 80
	if hp.size() > 1:
		port = hp[1].to_int()
	var err = _http.connect_to_host(hp[0], port)
	if err != OK:
		_fail("cannot connect to %s (error %d)" % [url, err])
		return
	_state = _CONNECTING
	_elapsed = 0.0


# _next returns the next request to send, [method, path, body, what, change], or null.
func _next():
	if _resync:
		_resync = false
		if _accepted != null:  # queryd may have restarted: what it accepted comes first
			return [HTTPClient.METHOD_PUT, "/v1/state", _json(_accepted), "replace", {"resync": true, "id": 0}]
	if _pending.size() > 0:
		var c = _pending[0]
		_pending.pop_front()
		_sent = c
		if c["replace"]:
			return [HTTPClient.METHOD_PUT, "/v1/state", _json(c["doc"]), "replace", c]
		return [HTTPClient.METHOD_PATCH, "/v1/state", _json(c["doc"]), "patch", c]
	if _ping_now or _since_sent >= ping_every:
		_ping_now = false
		return [HTTPClient.METHOD_POST, "/v1/ping", "", "ping", null]
	return null


func _send(m):
	var headers = ["Authorization: Bearer " + token, "Content-Type: application/merge-patch+json" if m[3] == "patch" else "Content-Type: application/json"]
	var err = _http.request(m[0], m[1], headers, m[2])
	if err != OK:
		_inflight = m
		_fail("%s: request failed (error %d)" % [m[3], err])
		return
	_inflight = m
	_body = null
	_elapsed = 0.0
	_state = _REQUESTING


func _receive():
	_http.poll()
	var st = _http.get_status()
	if st == HTTPClient.STATUS_REQUESTING:
		if _elapsed > timeout:
			_fail("%s: no answer within %s s" % [_inflight[3], timeout])
		return
	if st == HTTPClient.STATUS_BODY:
		var chunk = _http.read_response_body_chunk()
		if chunk.size() > 0:
			if _body == null:
				_body = chunk
			else:
				_body.append_array(chunk)
		if _elapsed > timeout:
			_fail("%s: answer not read within %s s" % [_inflight[3], timeout])
		return
	if st != HTTPClient.STATUS_CONNECTED or not _http.has_response():
		_fail("%s: connection lost (HTTPClient status %d)" % [_inflight[3], st])
		return
	var code = _http.get_response_code()
	var text = ""
	if _body != null:
		text = _body.get_string_from_utf8().strip_edges()
	_since_sent = 0.0
	_state = _READY
	if code == 401 or code >= 500:
		_fail("%s: queryd answered %d: %s" % [_inflight[3], code, text])
	else:
		_answered(_inflight, code, text)


# _answered records queryd's answer (HTTP code, body) to a request.
func _answered(m, code, reply):
	var ok = code == 200
	_inflight = null
	var c = m[4]
	if c != null and _sent != null and _sent["id"] == c["id"]:
		_sent = null
	if c != null and ok and not c.has("resync"):
		_accepted = _apply(_accepted, c)
	elif c != null and not ok and c.has("resync"):
		_accepted = null  # even what it accepted before: a queryd with other rules
	if ok:
		return
	_report("queryd rejected %s (%d): %s" % [m[3], code, reply])
	if c != null:
		emit_signal("rejected", m[3], m[2], reply)
		if error_target != null and rejected_method != "":
			error_target.call(rejected_method, m[3], m[2], reply)


func _fail(message):
	_report(message)
	_http.close()
	_state = _BACKOFF
	_wait = _backoff
	_backoff = min(_backoff * 2.0, backoff_max)
	_resync = true  # queryd may have restarted: send what it accepted, then the rest
	# The change in flight may or may not have arrived: it goes first again
	# (after the accepted document), unless a replace came since.
	if _inflight != null and _inflight[4] != null and _sent != null and _sent["id"] == _inflight[4]["id"]:
		if _sent["gen"] == _generation:
			_pending.push_front(_sent)
		_sent = null
	_inflight = null


func _report(message):
	emit_signal("error", message)
	if error_target != null:
		error_target.call(error_method, message)


# _merge applies an RFC 7386 merge patch to target and returns the result.
func _merge(target, p):
	if typeof(p) != TYPE_DICTIONARY:
		if typeof(p) == TYPE_ARRAY:
			return p.duplicate(true)
		return p
	if typeof(target) != TYPE_DICTIONARY:
		target = {}
	for k in p.keys():
		var v = p[k]
		if typeof(v) == TYPE_NIL:
			target.erase(k)
		else:
			target[k] = _merge(target.get(k), v)
	return target


# _copy_patch copies a merge patch's dictionaries, its nulls kept.
func _copy_patch(p):
	if typeof(p) == TYPE_DICTIONARY or typeof(p) == TYPE_ARRAY:
		return p.duplicate(true)
	return p


# _json writes a value as JSON: null, bool, int, float, String, Dictionary, Array.
func _json(v):
	var t = typeof(v)
	if t == TYPE_NIL:
		return "null"
	if t == TYPE_BOOL:
		return "true" if v else "false"
	if t == TYPE_INT:
		return str(v)
	if t == 3:  # TYPE_REAL in Godot 3, TYPE_FLOAT in Godot 4
		if is_nan(v) or is_inf(v):
			return "null"
		return str(v)
	if t == TYPE_DICTIONARY:
		var s = "{"
		var first = true
		for k in v.keys():
			if not first:
				s += ","
			first = false
			s += _quote(str(k)) + ":" + _json(v[k])
		return s + "}"
	if t == TYPE_ARRAY:
		var s = "["
		for i in range(v.size()):
			if i > 0:
				s += ","
			s += _json(v[i])
		return s + "]"
	return _quote(str(v))


func _quote(s):
	return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "\""
