# The seed's system: a token-gated API behind Traefik (Consul tags) and the
# dashboard store on one member cluster of a read-only tribe node.

project = "edge"

proxy {
  dialect = "traefik" # Traefik 1 and Traefik 2 tags: gated on either generation
  prefix  = "traefik"
}

variable "api_host" {
  type        = string
  default     = "127.0.0.1"
  description = "Address gated-api listens on, as the proxy reaches it."
}

variable "gate_token" {
  type        = string
  default     = null
  sensitive   = true
  description = "A token the gated application accepts (PROVISION_VAR_gate_token): the proof after each apply then shows the seed's third row, 200."
}

variable "dashboards" {
  type        = bool
  default     = true
  description = "Declare each team's dashboard objects, which need the search part (dashboard.hcl): false plans the gated APIs alone."
}

variable "api_port" {
  type    = number
  default = 8080

  validation {
    condition     = var.api_port >= 1 && var.api_port <= 65535
    error_message = "api_port is a TCP port, 1 to 65535."
  }
}
