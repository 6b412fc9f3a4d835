// Data-parallel gradient descent over MPI ranks: the projectile example (a shared launch velocity
// tuned so that a swarm lands on average at a target), its projectiles split among the ranks.
// Each rank simulates its own projectiles and runs the tape's backward over them; a
// weft::DistributedSum combines the ranks' exact sums of the loss and of the gradient, so every
// iteration gives the bits one process would give, whatever the number of ranks.
//
//   mpirun -np 4 build/release/examples/weft_data_parallel
//
// runs the optimisation three times in one job, on 1, 2 and 4 of the ranks (communicators split
// from the world), and prints whether the losses and gradients of every iteration are identical.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include <weft/distributed.hpp>
#include <weft/weft.hpp>

using weft::Array;
using weft::Float;
using weft::Int;

namespace {

constexpr int projectiles = 4096;
constexpr int steps = 24;
constexpr float dt = 0.05f;
constexpr float gravity = -9.81f;
constexpr int iterations = 20;

weft::Module sim{"data_parallel", {.deterministic = weft::Deterministic::RunToRun}};

// Each kernel handles projectiles base + tid: a rank's own contiguous range.
auto start =
    sim.kernel("start", {"base", "v0", "jitter", "pos", "vel"},
               [](Int base, Array<float> v0, Array<float> jitter, Array<float> pos, Array<float> vel) {
                   auto i = weft::tid() + base;
                   pos[2 * i] = 0.0f;
                   pos[2 * i + 1] = 0.0f;
                   vel[2 * i] = v0[0] + jitter[2 * i];
                   vel[2 * i + 1] = v0[1] + jitter[2 * i + 1];
               });

auto step = sim.kernel("step", {"base", "pos", "vel", "drag", "pos_next", "vel_next"},
                       [](Int base, Array<float> pos, Array<float> vel, Array<float> drag,
                          Array<float> pos_next, Array<float> vel_next) {
                           auto i = weft::tid() + base;
                           Float vx = vel[2 * i];
                           Float vy = vel[2 * i + 1];
                           Float speed = weft::sqrt(vx * vx + vy * vy + 1e-6f);
                           Float k = drag[i] * speed;
                           pos_next[2 * i] = pos[2 * i] + vx * dt;
                           pos_next[2 * i + 1] = pos[2 * i + 1] + vy * dt;
                           vel_next[2 * i] = vx - k * vx * dt;
                           vel_next[2 * i + 1] = vy + (gravity - k * vy) * dt;
                       });

auto distance = sim.kernel("distance", {"base", "pos", "target", "loss"},
                           [](Int base, Array<float> pos, Array<float> target, Array<float> loss) {
                               auto i = weft::tid() + base;
                               Float dx = pos[2 * i] - target[0];
                               Float dy = pos[2 * i + 1] - target[1];
                               loss[0] += (dx * dx + dy * dy) * (1.0f / projectiles);
                           });

struct Trace {
    std::vector<float> losses, gradients;  // per iteration: the loss, then the gradient's 2 components
};

// The optimisation on the ranks of `comm`, each owning a contiguous range of projectiles.
Trace optimise(const weft::Communicator& comm, weft::Device cpu) {
    std::mt19937 rng(2026);
    std::normal_distribution<float> noise(0.0f, 0.3f);
    std::uniform_real_distribution<float> drags(0.01f, 0.05f);
    std::vector<float> jitter(2 * projectiles), drag(projectiles);
    for (float& j : jitter) j = noise(rng);
    for (float& d : drag) d = drags(rng);
    auto v0 = weft::from_vector<float>({3.0f, 3.0f}, cpu, weft::requires_grad);
    auto jitters = weft::from_vector(jitter, cpu);
    auto drag_array = weft::from_vector(drag, cpu);
    auto target = weft::from_vector<float>({8.0f, 0.0f}, cpu);
    auto loss = weft::zeros<float>(1, cpu, weft::requires_grad);
    std::vector<weft::DeviceArray<float>> pos, vel;
    for (int s = 0; s <= steps; ++s) {
        pos.push_back(weft::zeros<float>(2 * projectiles, cpu, weft::requires_grad));
        vel.push_back(weft::zeros<float>(2 * projectiles, cpu, weft::requires_grad));
    }
    const int first = projectiles * comm.rank() / comm.size();
    const int mine = projectiles * (comm.rank() + 1) / comm.size() - first;

    Trace trace;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        weft::Tape tape;
        // The loss and the gradient of the shared velocity: sums over every rank's projectiles.
        weft::DistributedSum sum(comm, {loss, v0.grad()});
        tape.start();
        weft::launch(start, mine, first, v0, jitters, pos[0], vel[0]);
        for (int s = 0; s < steps; ++s)
            weft::launch(step, mine, first, pos[s], vel[s], drag_array, pos[s + 1], vel[s + 1]);
        loss.zero_();
        weft::launch(distance, mine, first, pos[steps], target, loss);
        tape.stop();
        tape.zero();
        tape.backward(loss);
        sum.reduce();
        const std::vector<float> l = loss.to_vector(), g = v0.grad().to_vector();
        trace.losses.push_back(l[0]);
        trace.gradients.insert(trace.gradients.end(), g.begin(), g.end());
        std::vector<float> v = v0.to_vector();
        for (int c = 0; c < 2; ++c) v[c] -= 0.2f * g[c];
        v0.copy_from_host(v.data(), v.size());
    }
    return trace;
}

bool identical(const Trace& a, const Trace& b) {
    return a.losses.size() == b.losses.size() &&
           std::memcmp(a.losses.data(), b.losses.data(), a.losses.size() * sizeof(float)) == 0 &&
           std::memcmp(a.gradients.data(), b.gradients.data(), a.gradients.size() * sizeof(float)) == 0;
}

}  // namespace

int main() {
    try {
        const weft::Communicator world = weft::Communicator::mpi_world();
        // weft::DistributedSum keeps its ranks' exact states on the CPU device (docs/design/0028):
        // WEFT_DEVICE is still checked, and a GPU named there leaves the optimisation on the CPU.
        if (!weft::default_device().is_cpu() && world.rank() == 0)
            std::printf("(the distributed sums run on the CPU device; WEFT_DEVICE names %s)\n",
                        weft::default_device().name().c_str());
        const weft::Device cpu = weft::Device::cpu();
        std::vector<int> counts;
        for (int g : {1, 2, 4})
            if (g <= world.size()) counts.push_back(g);
        std::vector<Trace> traces;
        for (int g : counts) {
            // Ranks below g optimise together; the others wait at the next split.
            const std::optional<weft::Communicator> part = world.split(world.rank() < g ? 0 : -1);
            if (part) traces.push_back(optimise(*part, cpu));
            world.barrier();
        }
        if (world.rank() != 0) return 0;
        for (int it = 0; it < iterations; it += 4) {
            std::printf("iteration %2d:", it);
            for (size_t t = 0; t < traces.size(); ++t)
                std::printf("  %d rank%s: loss %.6f gradient (%.5f, %.5f)", counts[t],
                            counts[t] > 1 ? "s" : "", traces[t].losses[it], traces[t].gradients[2 * it],
                            traces[t].gradients[2 * it + 1]);
            std::printf("\n");
        }
        bool same = true;
        for (size_t t = 1; t < traces.size(); ++t) same = same && identical(traces[0], traces[t]);
        std::printf("%zu rank counts (", traces.size());
        for (size_t t = 0; t < counts.size(); ++t) std::printf("%s%d", t ? ", " : "", counts[t]);
        std::printf(") give bit-identical losses and gradients in every iteration: %s\n",
                    same ? "yes" : "NO");
        if (world.size() < 4) std::printf("(run with mpirun -np 4 to compare 1, 2 and 4 ranks)\n");
        return same ? 0 : 1;
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "weft_data_parallel: %s\n", e.what());
        return 1;
    }
}
