//! Scratch probe (not part of the project): times raw WGSL GEMV variants.
use std::time::Instant;
use wgpu::util::DeviceExt;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = &args[1];
    let inst = wgpu::Instance::new({
        let mut d = wgpu::InstanceDescriptor::new_without_display_handle();
        d.backends = wgpu::Backends::VULKAN;
        d
    });
    let adapter = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::VULKAN)).into_iter().next().unwrap();
    println!("{:?}", adapter.get_info().name);
    let feats = adapter.features() & (wgpu::Features::SUBGROUP | wgpu::Features::SHADER_F16);
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: feats,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .unwrap();
    let (n, k) = if std::env::var("DRY").is_ok() { (64u32, 256u32) } else { (14336u32, 4096u32) };
    let nb = k / 32;
    let wrow = nb * 18;
    let wbytes = (n * wrow) as usize;
    let mut seed = 1u64;
    let wdata: Vec<u8> = (0..wbytes + 64)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 56) as u8
        })
        .collect();
    let wbuf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &wdata,
        usage: wgpu::BufferUsages::STORAGE,
    });
    let xbuf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &vec![0u8; 8 * k as usize * 4],
        usage: wgpu::BufferUsages::STORAGE,
    });
    let obuf = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (wbytes + 64) as u64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    for spec in &args[2..] {
        // file:MR:C:trusted:groups
        let f: Vec<&str> = spec.split(':').collect();
        let src = std::fs::read_to_string(format!("{dir}/{}", f[0])).unwrap().replace("MRV", f[1]).replace("CV", f[2]);
        let trusted = f[3] == "1";
        let groups: u32 = f[4].parse().unwrap();
        let desc = wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(src.into()) };
        let module = if trusted {
            unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        } else {
            device.create_shader_module(desc)
        };
        let pipe = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let pv: [u32; 4] = if f[0] == "copy.wgsl" { [(wbytes / 16) as u32, 0, 0, 0] } else { [n, k, wrow, nb] };
        let ubuf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &pv.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipe.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: ubuf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: xbuf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: wbuf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: obuf.as_entire_binding() },
            ],
        });
        let reps = if std::env::var("DRY").is_ok() { 1 } else { 100 };
        let mut times = vec![];
        for it in 0..(if reps == 1 { 2 } else { 6 }) {
            let mut enc = device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipe);
                pass.set_bind_group(0, &bg, &[]);
                for _ in 0..reps {
                    pass.dispatch_workgroups(groups.min(65535), groups.div_ceil(65535), 1);
                }
            }
            let t = Instant::now();
            queue.submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            if it > 0 {
                times.push(t.elapsed().as_secs_f64() / reps as f64 * 1e6);
            }
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let us = times[times.len() / 2];
        let gbs = if f[0] == "copy.wgsl" { 2.0 * wbytes as f64 / us / 1e3 } else { wbytes as f64 / us / 1e3 };
        println!("{spec}\t{us:.2} us\t{gbs:.0} GB/s");
    }
}
