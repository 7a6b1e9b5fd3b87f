variable "consul" {
  type    = string
  default = "" # the project's own datacenter
}

variable "mode" {
  type = string
}

variable "agents" {
  type = map(string)
}

key "apps/span/mode" {
  consul = var.consul
  value  = var.mode
}

service "web" {
  for_each = var.agents
  agent    = each.value
  id       = "web-${each.key}"
  port     = 8080
}
