# Area A: the application serves /api and /auth; Traefik claims the route
# of each team's gated API and asks /auth first, with the client's
# X-Auth-Token. One module instance per team (specs/modules/gated-api):
# its registration, route, auth, check, KV entry and dashboard objects.
# The seed's API is the edge team's (Path:/api); the billing team's is
# the same application behind its own host (a longer rule, which Traefik
# tries first).

module "gated_api" {
  for_each = {
    edge    = { name = "gated-api", rule = "Path:/api", object_prefix = "", query = "level:error" }
    billing = { name = "billing-api", rule = "Host:billing.localhost;Path:/api", object_prefix = "billing-", query = "level:error AND service:billing-api" }
  }
  source        = "./modules/gated-api"
  name          = each.value.name
  rule          = each.value.rule
  host          = var.api_host
  port          = var.api_port
  team          = each.key
  object_prefix = each.value.object_prefix
  query         = each.value.query
  index_pattern = "logs-*"
  dashboards    = var.dashboards
  proof_token   = var.gate_token
}

output "services" {
  value = sort([for t in module.gated_api : t.service_id])
}

output "dashboards" {
  value = sort(compact([for t in module.gated_api : t.dashboard]))
}
