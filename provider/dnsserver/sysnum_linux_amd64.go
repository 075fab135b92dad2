package dnsserver

// System call numbers the raw UDP loop needs (syscall lacks SENDMMSG here).
const (
	sysRecvmmsg = 299
	sysSendmmsg = 307
)
