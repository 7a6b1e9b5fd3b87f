project = "edge"

service "web" { # ERROR: Proxy settings without a proxy kind
  port = 8080
  proxy = {
    destination_service_name = "web"
  }
}
