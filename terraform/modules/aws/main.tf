locals {
  common_tags = merge(var.tags, {
    "lsmbench:testbed" = var.name
    "lsmbench:expires" = var.expiry_hours == null ? "never" : timeadd(plantimestamp(), "${var.expiry_hours}h")
  })
  zone     = coalesce(var.availability_zone, data.aws_availability_zones.here.names[0])
  ami      = coalesce(var.ami_id, data.aws_ami.debian.id)
  data_dir = "/mnt/lsmbench/data"
  ssd      = { for i in range(var.ssd_nodes) : format("%s-ssd%d", var.name, i) => i }
  hdd      = { for i in range(var.hdd_nodes) : format("%s-hdd%d", var.name, i) => i }
}

data "aws_availability_zones" "here" {
  state = "available"
}

data "aws_ami" "debian" {
  most_recent = true
  owners      = ["136693071363"] # Debian's official AWS account

  filter {
    name   = "name"
    values = ["debian-12-amd64-*"]
  }
  filter {
    name   = "architecture"
    values = ["x86_64"]
  }
}

data "aws_subnet" "chosen" {
  count = var.subnet_id == null ? 0 : 1
  id    = var.subnet_id
}

data "aws_subnets" "default" {
  count = var.subnet_id == null ? 1 : 0

  filter {
    name   = "default-for-az"
    values = ["true"]
  }
  filter {
    name   = "availability-zone"
    values = [local.zone]
  }
}

locals {
  subnet_id = var.subnet_id != null ? var.subnet_id : data.aws_subnets.default[0].ids[0]
  vpc_id    = var.subnet_id != null ? data.aws_subnet.chosen[0].vpc_id : null
}

resource "aws_key_pair" "controller" {
  key_name   = "${var.name}-lsmbench"
  public_key = file(pathexpand(var.ssh_public_key_file))
  tags       = local.common_tags
}

resource "aws_security_group" "ssh" {
  name        = "${var.name}-lsmbench-ssh"
  description = "lsmbench testbed ${var.name}: SSH from the controller only"
  vpc_id      = local.vpc_id
  tags        = local.common_tags
}

resource "aws_vpc_security_group_ingress_rule" "ssh" {
  security_group_id = aws_security_group.ssh.id
  description       = "SSH from the lsmbench controller"
  cidr_ipv4         = var.controller_cidr
  ip_protocol       = "tcp"
  from_port         = 22
  to_port           = 22
  tags              = local.common_tags
}

resource "aws_vpc_security_group_egress_rule" "all" {
  security_group_id = aws_security_group.ssh.id
  description       = "Package repositories and time sync"
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "-1"
  tags              = local.common_tags
}

# SSD nodes: the instance-store NVMe disk is formatted and mounted at /mnt/lsmbench on boot.
resource "aws_instance" "ssd" {
  for_each = local.ssd

  ami                                  = local.ami
  instance_type                        = var.ssd_instance_type
  subnet_id                            = local.subnet_id
  availability_zone                    = local.zone
  key_name                             = aws_key_pair.controller.key_name
  vpc_security_group_ids               = [aws_security_group.ssh.id]
  associate_public_ip_address          = true
  instance_initiated_shutdown_behavior = var.expiry_hours == null ? "stop" : "terminate"
  user_data = templatefile("${path.module}/templates/user_data.sh.tftpl", {
    disk_kind    = "ssd"
    volume_id    = ""
    data_dir     = local.data_dir
    expiry_hours = var.expiry_hours == null ? 0 : var.expiry_hours
  })

  metadata_options {
    http_tokens = "required"
  }
  root_block_device {
    volume_size = 16
    encrypted   = true
  }
  tags = merge(local.common_tags, { Name = each.key, "lsmbench:disk" = "ssd" })
}

# HDD nodes: a throughput-optimized st1 volume each, found on boot by its volume id.
resource "aws_ebs_volume" "hdd" {
  for_each = local.hdd

  availability_zone = local.zone
  type              = "st1"
  size              = var.hdd_volume_gb
  encrypted         = true
  tags              = merge(local.common_tags, { Name = "${each.key}-data", "lsmbench:disk" = "hdd" })
}

resource "aws_instance" "hdd" {
  for_each = local.hdd

  ami                                  = local.ami
  instance_type                        = var.hdd_instance_type
  subnet_id                            = local.subnet_id
  availability_zone                    = local.zone
  key_name                             = aws_key_pair.controller.key_name
  vpc_security_group_ids               = [aws_security_group.ssh.id]
  associate_public_ip_address          = true
  instance_initiated_shutdown_behavior = var.expiry_hours == null ? "stop" : "terminate"
  user_data = templatefile("${path.module}/templates/user_data.sh.tftpl", {
    disk_kind    = "hdd"
    volume_id    = aws_ebs_volume.hdd[each.key].id
    data_dir     = local.data_dir
    expiry_hours = var.expiry_hours == null ? 0 : var.expiry_hours
  })

  metadata_options {
    http_tokens = "required"
  }
  root_block_device {
    volume_size = 16
    encrypted   = true
  }
  tags = merge(local.common_tags, { Name = each.key, "lsmbench:disk" = "hdd" })
}

resource "aws_volume_attachment" "hdd" {
  for_each = local.hdd

  device_name = "/dev/sdf"
  volume_id   = aws_ebs_volume.hdd[each.key].id
  instance_id = aws_instance.hdd[each.key].id
}
