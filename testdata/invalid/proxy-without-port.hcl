project = "edge"

service "web-proxy" { # ERROR: Connect proxy without a port
  kind = "connect-proxy"
  proxy {
    destination_service_name = "web"
  }
}
