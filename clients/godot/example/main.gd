# SPDX-License-Identifier: MIT
# example/main.gd: a game server's main loop feeding queryd through the
# addon, headless: godot3-server --path clients/godot -s example/main.gd
# (Godot 4: godot --headless --path clients/godot -s example/main.gd).
#
# QUERYD_FEED_HTTP and QUERYD_FEED_TOKEN say where to feed, QUERYD_FEED_PING
# the ping interval in seconds (default 10), QUERYD_EXAMPLE_SECONDS how long
# to run (default 600). It sets the state, has a player join, another leave
# and a score change, then patches a tick counter ten times a second and
# prints the slowest feed call so far twice a second.
extends SceneTree

var feed = null
var clock = null
var started = false
var elapsed = 0.0
var end_after = 600.0
var step = 0
var frame = 0
var slowest = 0


func _env(name, def):
	var v = OS.get_environment(name)
	if v == "":
		return def
	return v


func _init():
	Engine.set("target_fps", 60)  # Godot 3
	Engine.set("max_fps", 60)  # Godot 4
	clock = OS
	if Engine.has_singleton("Time"):
		clock = Engine.get_singleton("Time")
	feed = load("res://addons/queryd_feed/queryd_feed.gd").new()
	feed.url = _env("QUERYD_FEED_HTTP", "http://127.0.0.1:27017")
	feed.token = _env("QUERYD_FEED_TOKEN", "")
	feed.ping_every = _env("QUERYD_FEED_PING", "10").to_float()
	feed.error_target = self
	feed.error_method = "_on_feed_error"
	end_after = _env("QUERYD_EXAMPLE_SECONDS", "600").to_float()
	get_root().add_child(feed)


func _on_feed_error(message):
	printerr("feed error: " + message)


# timed runs one feed call and keeps the slowest's duration.
func _timed(method, arg):
	var t0 = clock.get_ticks_usec()
	feed.call(method, arg)
	slowest = max(slowest, clock.get_ticks_usec() - t0)


func _idle(delta):  # Godot 3
	_frame(delta)


func _process(delta):  # Godot 4
	_frame(delta)


func _frame(delta):
	elapsed += delta
	frame += 1
	if step == 0:
		_timed("replace", {
			"name": "Ünïcødé ✓ Server",
			"map": "de_dust2",
			"max_players": 16,
			"players": {"1": {"name": "Zoë", "score": 3}, "2": {"name": "Łukasz", "score": 7}},
			"rules": {"motd": "say \"hi\" \\o/"},
		})
		step = 1
	elif step == 1 and elapsed > 0.2:
		_timed("patch", {"players": {"3": {"name": "Σωκράτης", "score": 1}}})  # joins
		step = 2
	elif step == 2 and elapsed > 0.4:
		_timed("patch", {"players": {"2": null}})  # leaves
		_timed("patch", {"players": {"1": {"score": 5}}})
		print("fed")
		step = 3
	elif step == 3 and frame % 6 == 0:
		_timed("patch", {"values": {"tick": frame}})
	if frame % 30 == 0:
		print("slowest call: %d us" % slowest)
	if elapsed > end_after:
		quit()  # Godot 3 ignores what _idle returns
