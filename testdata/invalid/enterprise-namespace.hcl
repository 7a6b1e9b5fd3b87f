project = "edge"

service "web" {
  port      = 8080
  namespace = "team-a" # ERROR: Consul Enterprise only
}
