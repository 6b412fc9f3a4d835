// A discrete-element particle simulation, written as a Warp user writes one: particles in a box
// under gravity, a spring-dashpot contact between touching particles found through
// weft::HashGrid, each contact's force added to both particles with atomics, ground and wall
// contacts, symplectic Euler. It runs twice with plain atomics and twice with deterministic
// ones: plain float atomics land in a different order on each run, and the simulation (chaotic,
// like every granular flow) amplifies the last-bit differences; the deterministic runs repeat bit
// for bit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

using weft::Array;
using weft::ArrayField;
using weft::Field;
using weft::Float;
using weft::Int;
using weft::vec3;

namespace {

constexpr int side = 16;   // particles along x and z in the initial lattice
constexpr int layers = 8;  // and along y
constexpr int num_particles = side * layers * side;
constexpr int steps = 300;

// The model's parameters, one struct for kernels and host (the spec's @wp.struct).
template <class Side = weft::host_side>
struct Model {
    Field<Side, float> radius;     // of every particle
    Field<Side, float> stiffness;  // normal spring: force per metre of overlap
    Field<Side, float> damping;    // normal dashpot
    Field<Side, float> inv_mass;
    Field<Side, float> box;  // walls at 0 and `box` on x and z; the ground at y = 0
    Field<Side, vec3> gravity;
    Field<Side, float> dt;
};
WEFT_STRUCT(Model, radius, stiffness, damping, inv_mass, box, gravity, dt)

// The repulsive spring-dashpot force along n for a penetration `depth` closing at speed -vn.
Float contact_force(const Model<weft::kernel_side>& m, const Float& depth, const Float& vn) {
    return weft::max(m.stiffness * depth - m.damping * vn, 0.0f);
}

// The kernels of one module (plain or deterministic): the same code in both.
struct Kernels {
    explicit Kernels(weft::Module& sim)
        : contacts(sim.kernel("contacts", {"model", "grid", "x", "v", "f"},
                              [](Model<weft::kernel_side> m, weft::HashGridView<weft::kernel_side> grid,
                                 Array<vec3> x, Array<vec3> v, Array<vec3> f) {
                                  // Threads follow the grid's cell order, so neighbouring threads read nearby
                                  // particles.
                                  const Int i = weft::hash_grid_point_id(grid, weft::tid());
                                  const vec3 xi = x[i];
                                  const vec3 vi = v[i];
                                  const Float reach = 2.0f * m.radius;
                                  weft::for_each_neighbor(grid, xi, reach, [&](Int j) {
                                      weft::if_(j > i, [&] {  // each pair once: i pushes j back
                                          const vec3 d = xi - vec3(x[j]);
                                          const Float dist = weft::length(d);
                                          weft::if_(dist < reach && dist > 1e-6f, [&] {
                                              const vec3 n = d / dist;
                                              const Float vn = weft::dot(vi - vec3(v[j]), n);
                                              const vec3 fij = n * contact_force(m, reach - dist, vn);
                                              f[i] += fij;  // atomics: every contact of a particle adds to it
                                              f[j] -= fij;
                                          });
                                      });
                                  });
                              })),
          integrate(sim.kernel("integrate", {"model", "x", "v", "f"},
                               [](Model<weft::kernel_side> m, Array<vec3> x, Array<vec3> v, Array<vec3> f) {
                                   auto i = weft::tid();
                                   vec3 p = x[i];
                                   vec3 vel = v[i];
                                   vec3 force = f[i];
                                   // The ground and the four walls push back like particles do.
                                   const Float r = m.radius;
                                   force.y += contact_force(m, r - p.y, vel.y);
                                   force.x += contact_force(m, r - p.x, vel.x);
                                   force.x -= contact_force(m, p.x - (m.box - r), -vel.x);
                                   force.z += contact_force(m, r - p.z, vel.z);
                                   force.z -= contact_force(m, p.z - (m.box - r), -vel.z);
                                   // Symplectic Euler: the new velocity moves the particle.
                                   vel += (force * m.inv_mass + m.gravity) * m.dt;
                                   p += vel * m.dt;
                                   x[i] = p;
                                   v[i] = vel;
                                   f[i] = vec3();  // ready for the next step's contacts
                               })) {}
    weft::Kernel<Model<weft::kernel_side>, weft::HashGridView<weft::kernel_side>, Array<vec3>, Array<vec3>,
                 Array<vec3>>
        contacts;
    weft::Kernel<Model<weft::kernel_side>, Array<vec3>, Array<vec3>, Array<vec3>> integrate;
};

struct Result {
    std::vector<weft::host::vec3f> x;
    double ms_per_step = 0;
};

Result simulate(const Kernels& k, const Model<>& model, const std::vector<weft::host::vec3f>& x0,
                const std::vector<weft::host::vec3f>& v0, weft::HashGrid& grid, weft::Device dev) {
    auto x = weft::from_vector<vec3>(x0, dev);
    auto v = weft::from_vector<vec3>(v0, dev);
    auto f = weft::zeros<vec3>(num_particles, dev);
    weft::synchronize(dev);
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
        grid.build(x, 2.0f * model.radius);
        weft::launch(k.contacts, num_particles, model, grid.view(), x, v, f);
        weft::launch(k.integrate, num_particles, model, x, v, f);
    }
    weft::synchronize(dev);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return {x.to_vector(), ms / steps};
}

// How two runs' final positions differ: components with other bits, and the largest difference.
std::string compare(const std::vector<weft::host::vec3f>& a, const std::vector<weft::host::vec3f>& b) {
    int differ = 0;
    float largest = 0;
    for (size_t i = 0; i < a.size(); ++i)
        for (int c = 0; c < 3; ++c) {
            const float p = (&a[i].x)[c], q = (&b[i].x)[c];
            if (std::memcmp(&p, &q, sizeof p) != 0) ++differ;
            largest = std::max(largest, std::abs(p - q));
        }
    if (differ == 0) return "identical bits";
    char text[160];
    std::snprintf(text, sizeof text, "%d of %zu coordinates differ, by up to %.2g m", differ, 3 * a.size(),
                  largest);
    return text;
}

}  // namespace

int main() try {
    const weft::Device dev = weft::default_device();
    std::printf("device: %s%s\n", dev.name().c_str(),
                dev.is_cuda() ? (" (" + weft::device_info(dev).name + ")").c_str()
                              : " (WEFT_DEVICE=cuda:N picks a GPU)");

    const Model<> model{.radius = 0.05f,
                        .stiffness = 2.0e4f,
                        .damping = 20.0f,
                        .inv_mass = 1.0f,
                        .box = 2.0f,
                        .gravity = {0.0f, -9.81f, 0.0f},
                        .dt = 5.0e-4f};
    // A lattice with gaps of a twentieth of a diameter and random velocities: contacts from the start.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> jitter(-0.005f, 0.005f), speed(-1.5f, 1.5f);
    std::vector<weft::host::vec3f> x0, v0;
    const float spacing = 0.105f;
    for (int a = 0; a < side; ++a)
        for (int b = 0; b < layers; ++b)
            for (int c = 0; c < side; ++c) {
                x0.push_back({0.1f + spacing * a + jitter(rng), 0.06f + spacing * b + jitter(rng),
                              0.1f + spacing * c + jitter(rng)});
                v0.push_back({speed(rng), speed(rng), speed(rng)});
            }
    // Cells of one diameter, 32 x 32 x 32 of them (the box is 20 cells wide).
    weft::HashGrid grid(32, 32, 32, dev);

    weft::Module plain{"particles_plain"};
    weft::Module deterministic{"particles_deterministic", {.deterministic = weft::Deterministic::RunToRun}};
    const Kernels plain_kernels(plain), deterministic_kernels(deterministic);
    const auto compile_start = std::chrono::steady_clock::now();
    const bool cached = plain.compile(dev).loaded_from_cache & deterministic.compile(dev).loaded_from_cache;
    grid.build(weft::from_vector<vec3>(x0, dev), 2.0f * model.radius);  // readies the grid's module too
    std::printf(
        "%d particles, %d steps of %.1f ms; modules %s in %.0f ms\n\n", num_particles, steps, 1e3 * model.dt,
        cached ? "loaded from the cache" : "compiled",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start).count());

    const Result p1 = simulate(plain_kernels, model, x0, v0, grid, dev);
    const Result p2 = simulate(plain_kernels, model, x0, v0, grid, dev);
    const Result d1 = simulate(deterministic_kernels, model, x0, v0, grid, dev);
    const Result d2 = simulate(deterministic_kernels, model, x0, v0, grid, dev);

    double height0 = 0, height = 0;
    int escaped = 0;
    for (int i = 0; i < num_particles; ++i) {
        height0 += x0[i].y / num_particles;
        height += d1.x[i].y / num_particles;
        const auto& p = d1.x[i];
        if (p.y < 0 || p.x < 0 || p.z < 0 || p.x > model.box || p.z > model.box) ++escaped;
    }
    std::printf("mean height %.3f m -> %.3f m, particles outside the box: %d\n\n", height0, height, escaped);
    const std::string plain_runs = compare(p1.x, p2.x);
    std::printf("plain atomics (NotGuaranteed), run 1 vs run 2: %s%s\n", plain_runs.c_str(),
                plain_runs == "identical bits" ? " (the additions happened to land in the same order)" : "");
    std::printf("deterministic (RunToRun),      run 1 vs run 2: %s\n", compare(d1.x, d2.x).c_str());
    std::printf("time per step: plain %.2f ms, deterministic %.2f ms (grid build included)\n",
                (p1.ms_per_step + p2.ms_per_step) / 2, (d1.ms_per_step + d2.ms_per_step) / 2);
    return compare(d1.x, d2.x) == "identical bits" ? 0 : 1;
} catch (const weft::Error& e) {  // one line, status 1: never an abort
    std::fprintf(stderr, "weft_particles: %s\n", e.what());
    return 1;
}
