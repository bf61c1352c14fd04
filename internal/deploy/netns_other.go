//go:build !linux

package deploy

import "errors"

var errNoNetns = errors.New("network namespaces need Linux")

type netnsNet struct{ hub, prefix string }

// NetnsAvailable reports why network namespaces cannot be used: they need
// Linux.
func NetnsAvailable() error { return errNoNetns }

// CleanStaleNetns does nothing off Linux.
func CleanStaleNetns() ([]string, error) { return nil, nil }

func newNetns([]*Node) (*netnsNet, error) { return nil, errNoNetns }

func (n *netnsNet) cut([]*Node, bool) (func() error, error)      { return nil, errNoNetns }
func (n *netnsNet) split([]*Node, []*Node) (func() error, error) { return nil, errNoNetns }
func (n *netnsNet) rules() (string, error)                       { return "", errNoNetns }
func (n *netnsNet) close() error                                 { return nil }
