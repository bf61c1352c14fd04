package sentinel

import (
	"fmt"
	"strings"
)

// HelloChannel is SENTINEL_HELLO_CHANNEL.
const HelloChannel = "__sentinel__:hello"

// Hello is the 8-field hello payload:
// ip,port,runid,current_epoch,master_name,master_ip,master_port,master_config_epoch.
type Hello struct {
	IP                string
	Port              int
	RunID             string
	CurrentEpoch      uint64
	MasterName        string
	MasterIP          string
	MasterPort        int
	MasterConfigEpoch uint64
}

// ParseHello splits a payload as sentinelProcessHelloMessage does: exactly 8
// comma-separated tokens, numbers with C atoi/strtoull semantics. It never
// panics.
func ParseHello(payload string) (Hello, bool) {
	tok := strings.Split(payload, ",")
	if payload == "" || len(tok) != 8 {
		return Hello{}, false
	}
	return Hello{
		IP:                tok[0],
		Port:              cAtoi(tok[1]),
		RunID:             tok[2],
		CurrentEpoch:      cStrtoull(tok[3]),
		MasterName:        tok[4],
		MasterIP:          tok[5],
		MasterPort:        cAtoi(tok[6]),
		MasterConfigEpoch: cStrtoull(tok[7]),
	}, true
}

// String formats the payload as sentinelSendHello does.
func (h Hello) String() string {
	return fmt.Sprintf("%s,%d,%s,%d,%s,%s,%d,%d", h.IP, h.Port, h.RunID, h.CurrentEpoch,
		h.MasterName, h.MasterIP, h.MasterPort, h.MasterConfigEpoch)
}

// sendHello is sentinelSendHello.
func (c *Core) sendHello(ri *instance) {
	l := ri.link
	if l.disconnected() {
		return
	}
	ip := c.announceIP
	if ip == "" {
		ip = l.localIP
		if ip == "" {
			return
		}
	}
	port := c.announcePort
	if port == 0 {
		port = c.port
	}
	m := ri.masterOf()
	maddr := c.currentMasterAddr(m)
	h := Hello{ip, port, c.myID, c.currentEpoch, m.name, c.announce(maddr), maddr.Port, m.configEpoch}
	l.pending++
	c.emit(PublishHello{Instance: c.ref(ri), Payload: h.String()})
}

// onHello is sentinelReceiveHelloMessages (pub/sub path) or
// sentinelPublishCommand (direct PUBLISH, zero Instance).
func (c *Core) onHello(e HelloReceived) {
	if e.Instance.ID != 0 {
		l := c.links[e.Instance.Link]
		if l == nil {
			return
		}
		l.pcLastActivity = c.now
		// We are not interested in meeting ourselves.
		if c.myID != "" && strings.Contains(e.Payload, c.myID) {
			return
		}
	}
	c.processHello(e.Payload)
}

// processHello is sentinelProcessHelloMessage.
func (c *Core) processHello(payload string) {
	h, ok := ParseHello(payload)
	if !ok {
		return
	}
	m := c.masters[h.MasterName]
	if m == nil {
		return
	}
	si := c.findSentinel(m, h.IP, h.Port, h.RunID, true)
	if si == nil {
		removed := c.removeMatchingSentinel(m, h.RunID)
		if removed > 0 {
			c.event(LevelNotice, "+sentinel-address-switch", m, "%@ ip %s port %d for %s", h.IP, h.Port, h.RunID)
		} else if other := c.findSentinel(m, h.IP, h.Port, "", true); other != nil {
			c.event(LevelNotice, "+sentinel-invalid-addr", other, "%@")
			obsolete := other.runID
			for _, mm := range c.sortedMasters() {
				c.removeMatchingSentinel(mm, obsolete)
			}
		}
		si, _ = c.createInstance(h.RunID, fSentinel, h.IP, h.Port, m.quorum, m)
		if si != nil {
			if removed == 0 {
				c.event(LevelNotice, "+sentinel", si, "%@")
			}
			si.runID = h.RunID
			c.tryConnectionSharing(si)
			if removed > 0 {
				c.updateSentinelAddressInAllMasters(si)
			}
			c.flushConfig()
		}
	}

	if h.CurrentEpoch > c.currentEpoch {
		c.currentEpoch = h.CurrentEpoch
		c.flushConfig()
		c.event(LevelWarning, "+new-epoch", m, "%d", c.currentEpoch)
	}

	if si != nil && m.configEpoch < h.MasterConfigEpoch {
		m.configEpoch = h.MasterConfigEpoch
		if h.MasterPort != m.addr.Port || !c.addrEqualsHost(m.addr, h.MasterIP) {
			c.event(LevelWarning, "+config-update-from", si, "%@")
			c.event(LevelWarning, "+switch-master", m, "%s %s %d %s %d",
				m.name, c.announce(m.addr), m.addr.Port, h.MasterIP, h.MasterPort)
			old := m.addr
			c.resetMasterAndChangeAddress(m, h.MasterIP, h.MasterPort)
			c.callClientReconfScript(m, false, "start", old, m.addr)
		}
	}
	if si != nil {
		si.lastHelloTime = c.now
	}
}
