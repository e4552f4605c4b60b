package main

// registerMoreTools adds the tools of the snapshot and flow packages.
func registerMoreTools(a *app) {}
