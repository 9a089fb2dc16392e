//go:build renamed

package main

const welcomeStep = "send-greeting"
