# SPDX-License-Identifier: MIT
# example/queue_test.gd: run by clients/TestGodotQueue against a live
# queryd, Godot 3 (it waits for a file with File, which Godot 4 renamed):
# feeds a state and prints "ready"; once the file QUERYD_QUEUE_GO_FILE
# exists (queryd is frozen by then) it sends 10 patches at once through the
# addon with a queue of 2 and prints "patched".
extends SceneTree

var feed = null
var step = 0
var elapsed = 0.0
var go_file = ""


func _init():
	Engine.set("target_fps", 60)
	go_file = OS.get_environment("QUERYD_QUEUE_GO_FILE")
	feed = load("res://addons/queryd_feed/queryd_feed.gd").new()
	feed.url = OS.get_environment("QUERYD_FEED_HTTP")
	feed.token = OS.get_environment("QUERYD_FEED_TOKEN")
	feed.max_queue = 2
	feed.ping_every = 1.0  # pings change no version
	feed.error_target = self
	feed.error_method = "_on_feed_error"
	get_root().add_child(feed)
	feed.replace({"name": "queue test", "values": {"tick": 0}})


func _on_feed_error(message):
	printerr("feed error: " + message)


func _idle(delta):
	elapsed += delta
	if step == 0 and feed.is_connected_to_queryd() and elapsed > 1.0:
		print("ready")
		step = 1
	elif step == 1 and File.new().file_exists(go_file):
		for tick in range(1, 11):
			feed.patch({"values": {"tick": tick}})
		print("patched")
		step = 2
	if elapsed > 120.0:
		quit()
