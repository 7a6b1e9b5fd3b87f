# A gated API as one unit: its Consul registration, whose tags make every
# Traefik generation claim its route and ask /auth first; its health
# check; its KV entry; and the dashboard tool's objects that watch it,
# read from the JSON files the tool exports (objects/). The root calls it
# once per team (specs/gated-api.hcl).

variable "name" {
  type        = string
  description = "Consul's service name; the ID is <name>-1."
}

variable "rule" {
  type        = string
  description = "The route Traefik claims for it (frontend rule)."
}

variable "host" {
  type = string
}

variable "port" {
  type = number
}

variable "team" {
  type        = string
  description = "The team's KV folder (apps/<team>/) and the ID of its dashboard."
}

variable "object_prefix" {
  type        = string
  default     = ""
  description = "Before the IDs of the search and the visualization, so that teams' objects differ."
}

variable "query" {
  type    = string
  default = "level:error"
}

variable "index_pattern" {
  type        = string
  description = "The ID of the index pattern the search reads."
}

variable "proof_token" {
  type        = string
  default     = null
  sensitive   = true
  description = "A token /auth accepts: the proof after each apply then expects 200 with it (null: the two 401s only)."
}

variable "dashboards" {
  type        = bool
  default     = true
  description = "Declare the team's dashboard objects (they need the root's search block and .dashboard index)."
}

service "api" {
  name    = var.name
  id      = "${var.name}-1"
  address = var.host
  port    = var.port
  meta = {
    team = var.team
  }

  frontend {
    rule        = var.rule
    entrypoints = ["web"]

    forward_auth {
      address               = "http://${var.host}:${var.port}/auth"
      auth_request_headers  = ["X-Auth-Token"]
      auth_response_headers = ["X-Auth-User"]
    }

    proof {
      token = var.proof_token
    }
  }

  check "health" {
    http     = "http://${var.host}:${var.port}/healthz"
    interval = "10s"
    timeout  = "2s"
  }
}

key "limits" {
  path  = "apps/${var.team}/limits"
  value = jsondecode(file("${path.module}/limits.json"))
}

locals {
  ids = {
    search        = "${var.object_prefix}errors"
    visualization = "${var.object_prefix}error-rate"
    dashboard     = var.team
  }
  objects = {
    for type, id in local.ids : type => jsondecode(templatefile("${path.module}/objects/${type}.json", {
      ids           = local.ids
      index_pattern = var.index_pattern
      query         = var.query
      title         = title(var.team)
    }))
  }
}

# One instance each, by the team's name, or none without dashboards.
document "search" "errors" {
  for_each = var.dashboards ? { (var.team) = local.objects.search } : {}
  id       = local.ids.search
  source   = each.value
}

document "visualization" "error-rate" {
  for_each = var.dashboards ? { (var.team) = local.objects.visualization } : {}
  id       = local.ids.visualization
  source   = each.value
}

document "dashboard" "team" {
  for_each = var.dashboards ? { (var.team) = local.objects.dashboard } : {}
  id       = local.ids.dashboard
  source   = each.value
}

output "service_id" {
  value = "${var.name}-1"
}

output "dashboard" {
  value = var.dashboards ? local.ids.dashboard : null
}

output "error_rate" {
  description = "The id of the team's error-rate visualization (null without dashboards)."
  value       = var.dashboards ? local.ids.visualization : null
}
