//go:build !linux

package servermain

func disableTHP(bool, func() error) string { return "" }

func prctlTHPDisable() error { return nil }
