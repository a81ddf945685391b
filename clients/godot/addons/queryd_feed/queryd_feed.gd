# SPDX-License-Identifier: MIT
# queryd_feed.gd: feed a game server's state to queryd over its HTTP feed
# ([feed] http, loopback, bearer token), for Godot 3 and Godot 4.
#
# Add it as a node (it works in _process, one poll per frame, never
# waiting): replace() and patch() change a local copy of the state and
# queue what to send (bounded; when the queue is full the whole newest state
# is sent instead); the node connects, sends, pings on a timer and
# reconnects with backoff, sending the whole last state again after each
# reconnect. Errors go to the "error" signal and, if set, to
# error_target.call(error_method, message). See README.md.
extends Node

signal error(message)

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
var _doc = null
var _need_replace = false
var _pending = []
var _ping_now = false
var _inflight = null
var _body = null


# replace sets the whole state (queryd's "replace").
func replace(state):
	_doc = _merge({}, state)
	_need_replace = true
	_pending.clear()


# patch merges an RFC 7386 merge patch (queryd's "patch"): a player joins
# with {"players": {"7": {...}}} and leaves with {"players": {"7": null}}.
func patch(p):
	if _doc == null:
		_doc = {}
	_doc = _merge(_doc, p)
	if _need_replace:
		return
	if _pending.size() >= max_queue:
		_pending.clear()
		_need_replace = true  # newest state wins
	else:
		_pending.append(_json(p))


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
			_need_replace = _doc != null  # queryd may have restarted: send the whole last state
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


# _next returns the next request to send, [method, path, body, what], or null.
func _next():
	if _need_replace and _doc != null:
		_need_replace = false
		_pending.clear()
		return [HTTPClient.METHOD_PUT, "/v1/state", _json(_doc), "replace"]
	if _pending.size() > 0:
		var body = _pending[0]
		_pending.pop_front()
		return [HTTPClient.METHOD_PATCH, "/v1/state", body, "patch"]
	if _ping_now or _since_sent >= ping_every:
		_ping_now = false
		return [HTTPClient.METHOD_POST, "/v1/ping", "", "ping"]
	return null


func _send(m):
	var headers = ["Authorization: Bearer " + token, "Content-Type: application/merge-patch+json" if m[3] == "patch" else "Content-Type: application/json"]
	var err = _http.request(m[0], m[1], headers, m[2])
	if err != OK:
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
	if code == 401:
		_fail("%s: queryd refused the token (401): %s" % [_inflight[3], text])
	elif code != 200:
		_report("queryd rejected %s (%d): %s" % [_inflight[3], code, text])


func _fail(message):
	_report(message)
	_http.close()
	_state = _BACKOFF
	_wait = _backoff
	_backoff = min(_backoff * 2.0, backoff_max)
	_need_replace = _doc != null  # what was in flight may be lost


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
