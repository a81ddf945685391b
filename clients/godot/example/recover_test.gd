# SPDX-License-Identifier: MIT
# example/recover_test.gd: run by clients/TestGodotRecover against a live
# queryd (or one not started yet), over the HTTP feed. A game loop: the good
# state at once, a patch queryd rejects (score 1.5) after 1 s unless
# QUERYD_RECOVER_BAD=0, a good patch (a player joins) after 1.5 s, a tick
# patch every 100 ms; each rejection printed as "rejected OP: REPLY". It
# quits after QUERYD_EXAMPLE_SECONDS (default 60). The same timeline as the
# other languages' recover tests (clients/recover_test.go).
extends SceneTree

var feed = null
var elapsed = 0.0
var end_after = 60.0
var step = 0
var tick = 0
var next_tick = 0.1
var bad = true


func _env(name, def):
	var v = OS.get_environment(name)
	if v == "":
		return def
	return v


func _init():
	Engine.set("target_fps", 60)  # Godot 3
	Engine.set("max_fps", 60)  # Godot 4
	feed = load("res://addons/queryd_feed/queryd_feed.gd").new()
	feed.url = _env("QUERYD_FEED_HTTP", "http://127.0.0.1:27017")
	feed.token = _env("QUERYD_FEED_TOKEN", "")
	feed.ping_every = _env("QUERYD_FEED_PING", "10").to_float()
	feed.error_target = self
	feed.error_method = "_on_feed_error"
	feed.rejected_method = "_on_rejected"
	end_after = _env("QUERYD_EXAMPLE_SECONDS", "60").to_float()
	bad = _env("QUERYD_RECOVER_BAD", "1") != "0"
	get_root().add_child(feed)


func _on_feed_error(message):
	printerr("feed error: " + message)


func _on_rejected(op, _change, reply):
	print("rejected %s: %s" % [op, reply])


func _idle(delta):  # Godot 3
	_frame(delta)


func _process(delta):  # Godot 4
	_frame(delta)


func _frame(delta):
	elapsed += delta
	if step == 0:
		feed.replace({"name": "recover test", "map": "good_map", "max_players": 8, "players": {"1": {"name": "Zoë", "score": 3}}})
		print("good")
		step = 1
	if step == 1 and elapsed >= 1.0:
		if bad:
			feed.patch({"players": {"1": {"score": 1.5}}})
			print("bad")
		step = 2
	if step == 2 and elapsed >= 1.5:
		feed.patch({"players": {"2": {"name": "Later", "score": 2}}})
		print("later")
		step = 3
	if elapsed >= next_tick:
		tick += 1
		feed.patch({"values": {"tick": tick}})
		next_tick += 0.1
	if elapsed > end_after:
		quit()
