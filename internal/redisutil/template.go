package redisutil

import "strings"

// Template is Redis's sdstemplate (sds.c, translated): it expands every
// {name} of tmpl with lookup(name); "{{" is a literal '{' (a '}' outside a
// variable is literal). It fails (ok false) on a '{' ending the template,
// a variable not closed, or a name lookup does not know. As in C, tmpl and
// the values end at a NUL byte.
func Template(tmpl string, lookup func(name string) (string, bool)) (res string, ok bool) {
	tmpl = cString(tmpl)
	var b strings.Builder
	p := tmpl
	for p != "" {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			break
		}
		b.WriteString(p[:i])
		p = p[i+1:]
		if p == "" {
			return "", false // premature end of template
		}
		if p[0] == '{' { // quoted '{'
			b.WriteByte('{')
			p = p[1:]
			continue
		}
		j := strings.IndexByte(p, '}')
		if j < 0 {
			return "", false
		}
		v, found := lookup(p[:j])
		if !found {
			return "", false
		}
		b.WriteString(cString(v))
		p = p[j+1:]
	}
	return b.String(), true
}

func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}
