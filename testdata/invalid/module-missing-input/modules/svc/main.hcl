variable "port" {
  type = number
}
variable "name" {
  type = string
}
service "svc" {
  id   = var.name
  name = var.name
  port = var.port
  check "tcp" {
    tcp      = "127.0.0.1:${var.port}"
    interval = "10s"
  }
}
