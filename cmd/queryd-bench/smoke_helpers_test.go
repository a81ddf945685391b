package main

import "os"

func osPid() int { return os.Getpid() }
