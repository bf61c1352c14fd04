package server

import "regexp"

func matchRegexp(expr, s string) bool { return regexp.MustCompile(expr).MatchString(s) }
