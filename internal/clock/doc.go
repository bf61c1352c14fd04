// Package clock abstracts wall time for the imperative shells (server, sentinel
// daemon): Clock{Now, NewTicker, AfterFunc} and a manual Fake for tests.
// Pure cores never import it: they take now as an argument.
// It imports the standard library only.
package clock
