project = "edge"

variable "api_host" {
  type    = string
  default = "127.0.0.1"
}

variable "api_port" {
  type    = number
  default = 8080
}

service "api" {
  address = var.api_host
  port    = var.api_port
}
