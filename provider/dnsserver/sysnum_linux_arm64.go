package dnsserver

// System call numbers the raw UDP loop needs.
const (
	sysRecvmmsg = 243
	sysSendmmsg = 269
)
