output "inventory" {
  description = "The nodes in lsmbench's inventory format: [{name, address, port, user, key_file, data_dir, device, disk}]."
  value = concat(
    [for name, inst in aws_instance.ssd : {
      name     = name
      address  = inst.public_ip
      port     = 22
      user     = var.ssh_user
      key_file = var.ssh_private_key_file
      data_dir = local.data_dir
      device   = "auto"
      disk     = "ssd"
    }],
    [for name, inst in aws_instance.hdd : {
      name     = name
      address  = inst.public_ip
      port     = 22
      user     = var.ssh_user
      key_file = var.ssh_private_key_file
      data_dir = local.data_dir
      device   = "auto"
      disk     = "hdd"
    }],
  )
}

output "security_group_id" {
  description = "The security group admitting SSH from the controller only."
  value       = aws_security_group.ssh.id
}

output "expires" {
  description = "When the nodes terminate themselves (RFC 3339), or never."
  value       = local.common_tags["lsmbench:expires"]
}
