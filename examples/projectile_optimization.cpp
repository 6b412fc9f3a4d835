// Gradient-based optimization through a simulation: the initial velocity of a swarm of
// projectiles (one shared velocity, a little jitter per projectile, air drag) is tuned with
// weft::Tape so that they land on average at a target. Every projectile reads the shared
// velocity, so the backward pass sums thousands of contributions into its gradient: in a
// RunToRun module that sum is exact, and two runs give identical gradients.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include <weft/weft.hpp>

using weft::Array;
using weft::Float;

namespace {

constexpr int projectiles = 4096;
constexpr int steps = 24;
constexpr float dt = 0.05f;
constexpr float gravity = -9.81f;

weft::Module sim{"projectile", {.deterministic = weft::Deterministic::RunToRun}};

// Each projectile starts at the origin with the shared velocity plus its jitter.
auto start = sim.kernel("start", {"v0", "jitter", "pos", "vel"},
                        [](Array<float> v0, Array<float> jitter, Array<float> pos, Array<float> vel) {
                            auto i = weft::tid();
                            pos[2 * i] = 0.0f;
                            pos[2 * i + 1] = 0.0f;
                            vel[2 * i] = v0[0] + jitter[2 * i];
                            vel[2 * i + 1] = v0[1] + jitter[2 * i + 1];
                        });

// One explicit Euler step with quadratic drag, into new arrays (a backward pass replays each
// kernel after it ran, so a kernel does not overwrite what it reads).
auto step = sim.kernel(
    "step", {"pos", "vel", "drag", "pos_next", "vel_next"},
    [](Array<float> pos, Array<float> vel, Array<float> drag, Array<float> pos_next, Array<float> vel_next) {
        auto i = weft::tid();
        Float vx = vel[2 * i];
        Float vy = vel[2 * i + 1];
        Float speed = weft::sqrt(vx * vx + vy * vy + 1e-6f);
        Float k = drag[i] * speed;
        pos_next[2 * i] = pos[2 * i] + vx * dt;
        pos_next[2 * i + 1] = pos[2 * i + 1] + vy * dt;
        vel_next[2 * i] = vx - k * vx * dt;
        vel_next[2 * i + 1] = vy + (gravity - k * vy) * dt;
    });

// The mean squared distance of the landing points from the target.
auto distance = sim.kernel("distance", {"pos", "target", "loss"},
                           [](Array<float> pos, Array<float> target, Array<float> loss) {
                               auto i = weft::tid();
                               Float dx = pos[2 * i] - target[0];
                               Float dy = pos[2 * i + 1] - target[1];
                               loss[0] += (dx * dx + dy * dy) * (1.0f / projectiles);
                           });

struct World {
    weft::DeviceArray<float> v0, jitter, drag, target, loss;
    std::vector<weft::DeviceArray<float>> pos, vel;
};

// Forward through every step on a tape, then backward from the loss; returns the loss.
float loss_and_gradient(World& w) {
    weft::Tape tape;
    tape.start();
    weft::launch(start, projectiles, w.v0, w.jitter, w.pos[0], w.vel[0]);
    for (int s = 0; s < steps; ++s)
        weft::launch(step, projectiles, w.pos[s], w.vel[s], w.drag, w.pos[s + 1], w.vel[s + 1]);
    w.loss.zero_();
    weft::launch(distance, projectiles, w.pos[steps], w.target, w.loss);
    tape.stop();
    tape.zero();
    tape.backward(w.loss);
    return w.loss.to_vector()[0];
}

}  // namespace

int main() try {
    const weft::Device dev = weft::default_device();
    std::printf("device: %s\n", dev.name().c_str());
    std::mt19937 rng(2026);
    std::normal_distribution<float> noise(0.0f, 0.3f);
    std::uniform_real_distribution<float> drags(0.01f, 0.05f);
    std::vector<float> jitter(2 * projectiles), drag(projectiles);
    for (float& j : jitter) j = noise(rng);
    for (float& d : drag) d = drags(rng);

    World w{weft::from_vector<float>({3.0f, 3.0f}, dev, weft::requires_grad),
            weft::from_vector(jitter, dev),
            weft::from_vector(drag, dev),
            weft::from_vector<float>({8.0f, 0.0f}, dev),
            weft::zeros<float>(1, dev, weft::requires_grad),
            {},
            {}};
    for (int s = 0; s <= steps; ++s) {
        w.pos.push_back(weft::zeros<float>(2 * projectiles, dev, weft::requires_grad));
        w.vel.push_back(weft::zeros<float>(2 * projectiles, dev, weft::requires_grad));
    }

    const float learning_rate = 0.2f;
    for (int iteration = 0; iteration < 40; ++iteration) {
        const float loss = loss_and_gradient(w);
        std::vector<float> v = w.v0.to_vector();
        const std::vector<float> g = w.v0.grad().to_vector();
        if (iteration % 4 == 0 || iteration == 39)
            std::printf("iteration %2d: loss %.6f  v0 = (%.4f, %.4f)  gradient (%.5f, %.5f)\n", iteration,
                        loss, v[0], v[1], g[0], g[1]);
        for (int c = 0; c < 2; ++c) v[c] -= learning_rate * g[c];
        w.v0.copy_from_host(v.data(), v.size());
    }

    // Two more gradient evaluations at the same point: bit for bit the same in RunToRun mode.
    loss_and_gradient(w);
    const std::vector<float> first = w.v0.grad().to_vector();
    loss_and_gradient(w);
    const std::vector<float> second = w.v0.grad().to_vector();
    const bool identical = std::memcmp(first.data(), second.data(), first.size() * sizeof(float)) == 0;
    std::printf("two deterministic runs give identical gradients: %s\n", identical ? "yes" : "NO");
    return identical ? 0 : 1;
} catch (const weft::Error& e) {  // one line, status 1: never an abort
    std::fprintf(stderr, "weft_projectile_optimization: %s\n", e.what());
    return 1;
}
