//! The chain terms of a layer's estimate (`docs/mapping.md` §5): what a link class whose PEs
//! pass messages from one to the next adds to a sample's latency and to the stage's period,
//! from how the kernel uses it ([`ChainFlow`], measured by the caller's dry runs) or, when
//! that is unknown, from the bound output's part alone.
//!
//! ```text
//! relay     (a send waits for the receive of the same message, row_allreduce's running sum):
//!           (L − 1) · (hop + msg + relay) + (relays − 1) · msg
//!           (the second term 0 on the chain that carries the result)
//! exchange  (sends wait for no receive of the same message, jacobi5's halos): one step,
//!           hop + switch + msg; a PE's exchanges overlap: the longest one counts, and
//!           an exchange whose sends follow another chain's message (residual's sums east
//!           after x from the north) adds its step after it
//! bus       (a row's or a column's bus, an exchange to the whole line): (L − 1) · hop +
//!           switch + msg, the message reaching the line's far end
//! handover  (a bus whose senders take turns, its sends waiting for another chain's message,
//!           cholesky's row buses): per handover, that chain's step + the new sender's
//!           relay work from its message + the bus's step
//! unknown   (L − 1) · (hop + switch + msg + msg / add_rate), msg the bound output's part
//!           or one wavelet
//! ```
//!
//! `msg` is a relayed (else a sent) message's words, `relay` the work from its arrival to its
//! send, `relays` the relayed messages per sample (at the PE that relays the most: a gather's
//! far end). A PE's measured work holds its own relays, so the latency takes each relaying
//! chain's `relay` once less, and the messages after the first follow one message apart; on
//! the chain that carries the result they are the result leaving, which the batch's fill
//! counts already (an exchange there adds nothing at all). When a PE's next sample waits
//! for a chain's message that answers its own send on another chain (a round trip,
//! layernorm_row's statistics east and back west), the stage's period holds every relaying
//! chain's latency too.
//!
//! ```text
//! answers   (a PE sends on a chain, then waits for the reduction's answer before it goes
//!           on, `n` times a sample, csl's bicgstab's dot products):
//!           up   = Σ relaying chains' crossing (L − 1) · (hop + msg + relay) − their relay
//!           back = the answer's bus crossing (hops · hop + switch + words), 0 when it comes
//!                  back along a relaying chain
//!           n · back + (n − 1) · up, to the latency and to the period (the first message's
//!           way up is the chains' latency already); the chain's messages after the first
//!           no longer follow one message apart
//! ```

/// How a region's PEs pass messages along a chain, per sample (or once, for a kernel that
/// passes them once whatever the batch): measured by dry runs of the region's PEs
/// ([`crate::KernelWork::chain_flow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainFlow {
    /// Sends on the chain's `out` port per sample.
    pub messages: u64,
    /// Their words.
    pub words: u64,
    /// Of them, the relays: sends that follow the receive of the same message (the same
    /// number among the port's transfers) on the chain's `in` port.
    pub relays: u64,
    /// Their words.
    pub relay_words: u64,
    /// The most cycles of work, task switches included, from a relayed message's arrival to
    /// its send.
    pub relay_work: u64,
    /// The chain's first PE relays too (a message that enters the region at its edge): every
    /// PE's relay is on the message's way, none of them in a step already.
    pub first_relays: bool,
    /// The PE takes its next sample only after a message on this chain that answers its own
    /// send of the same message on another chain.
    pub round_trip: bool,
    /// Times a bus's sending passes to another PE: its senders take turns (cholesky's row
    /// bus: each row's panel PE of the current column of tiles), so the PE that receives the
    /// most on it takes `handovers + 1` times the messages of the one that sends the most.
    pub handovers: u64,
    /// Of its sends in one sample's run, those whose answer on the pair's `in` port the PE
    /// waits for: the first receive it posts after the send is there, and a later send
    /// follows that receive (csl's bicgstab: each dot product's partial goes east, and the
    /// PE takes the allreduced total from the region's bus before it goes on). Each waits
    /// for the reduction's whole way and back.
    pub answered: u64,
    /// The words of such an answer (the most).
    pub answer_words: u64,
}

/// What a step costs on the target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepCosts {
    pub hop: u64,
    pub switch: u64,
    pub add_rate: u64,
}

/// What the chains add to a layer's estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ChainTerms {
    /// To the stage's period (the estimate's `chain`).
    pub chain: u64,
    /// To a sample's latency.
    pub steps: u64,
}

impl ChainTerms {
    /// The terms an estimate holds: its `chain`, and its latency beyond inputs and work.
    pub(crate) fn kept(e: &crate::placement::Estimate) -> ChainTerms {
        ChainTerms {
            chain: e.chain,
            steps: e
                .latency
                .saturating_sub(e.edge_in.max(e.stream) + e.compute),
        }
    }
}

/// One chain of a layer on its region.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChainOn {
    /// PEs along it.
    pub length: u64,
    /// The bound output's part, when the chain's `out` port carries it.
    pub bound: Option<u64>,
    pub flow: Option<ChainFlow>,
    /// Its sends follow the receive of the same message on another chain (residual's
    /// partial sums go east only after x came from the north): its step follows that
    /// chain's instead of overlapping it.
    pub waits: Option<Wait>,
    /// A row's or a column's bus: an exchange's message crosses the `L − 1` hops to the far
    /// end of the line, which no PE relays.
    pub bus: bool,
    /// Its sends wait for a reduction's answer, each before the next.
    pub answer: Option<Answer>,
}

/// The answers a chain's sends wait for ([`ChainOn::answer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Sends in a sample whose answer the PE waits for ([`ChainFlow::answered`]).
    pub trips: u64,
    /// The answer's way back beyond the relaying chains: a bus's crossing to its far end
    /// (hops · hop + switch + words), 0 when it comes back along a relaying chain
    /// (std.collectives' `row_allreduce`'s total west).
    pub back: u64,
}

/// The chain a chain's sends wait for ([`ChainOn::waits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    /// Its index among the layer's chains.
    pub on: usize,
    /// The most work from that chain's message to the send that follows it.
    pub relay_work: u64,
}

/// The chain terms of `chains`. A PE's measured work holds its relays, which every step of
/// a relaying chain counts too: a sample's latency takes them once, in the steps. Exchanges
/// overlap (a stencil's PE sends its halos on every side before it waits for theirs): they
/// take the longest one's step, and each exchange that waits for another chain's message
/// its own step after it.
pub(crate) fn chain_terms(chains: &[ChainOn], costs: StepCosts) -> ChainTerms {
    let mut terms = ChainTerms::default();
    let (mut relaying, mut relay_work, mut exchange) = (0, 0, 0);
    let mut round_trip = false;
    for c in chains.iter().filter(|c| c.length >= 2) {
        let latency = latency(c, costs);
        terms.steps += handovers(c, chains, costs);
        if c.flow.is_some_and(|f| f.relays == 0) && c.waits.is_some() {
            terms.steps += latency;
        } else if c.flow.is_some_and(|f| f.relays == 0) {
            exchange = exchange.max(latency);
        } else {
            terms.steps += latency;
        }
        terms.chain = terms.chain.max(c.bound.unwrap_or(0));
        if let Some(f) = c.flow.filter(|f| f.relays > 0) {
            relaying += latency;
            relay_work += if f.first_relays { 0 } else { f.relay_work };
            round_trip |= f.round_trip;
        }
    }
    terms.steps = (terms.steps + exchange).saturating_sub(relay_work);
    if round_trip {
        terms.chain += relaying.saturating_sub(relay_work);
    }
    let (trips, following) = answers(chains, costs);
    terms.steps = (terms.steps + trips).saturating_sub(following);
    terms.chain += trips;
    terms
}

/// The round trips a PE waits for: the answer of the chain that waits the most.
fn answer(chains: &[ChainOn]) -> Option<Answer> {
    chains
        .iter()
        .filter(|c| c.length >= 2)
        .filter_map(|c| c.answer)
        .filter(|a| a.trips > 0)
        .max_by_key(|a| (a.trips, a.back))
}

/// The relaying chains on a reduction's way: each with its flow.
fn reduction(chains: &[ChainOn]) -> impl Iterator<Item = (&ChainOn, ChainFlow)> {
    chains
        .iter()
        .filter(|c| c.length >= 2 && c.bound.is_none())
        .filter_map(|c| Some((c, c.flow.filter(|f| f.relays > 0)?)))
}

/// What a PE that waits for a reduction's answer after its `n` sends (on the chain that
/// waits the most) adds beyond the chains' latency: each answer's way back, and for every
/// send after the first the way up again — every relaying chain's crossing by one message,
/// less the relay work the PE's measured work holds (the first message's is the chains'
/// latency). The chain that carries the result is not on the reduction's way. With the words
/// the chains' latency counted for the messages that, one message apart there, wait for a
/// round trip each instead.
fn answers(chains: &[ChainOn], costs: StepCosts) -> (u64, u64) {
    // Without a relaying chain there is no reduction to answer: a message on a bus that
    // follows a PE's send (csl's cholesky: the next pivot down the column after a panel PE's
    // send along its row) is the next step of the kernel, which the other chains count.
    let Some(a) = answer(chains).filter(|_| reduction(chains).next().is_some()) else {
        return (0, 0);
    };
    let (mut up, mut following) = (0, 0);
    for (c, f) in reduction(chains) {
        let (crossing, msg) = crossing(c, f, costs.hop);
        let relay = if f.first_relays { 0 } else { f.relay_work };
        up += crossing - relay;
        following += (f.relays - 1).min(a.trips - 1) * msg;
    }
    (a.trips * a.back + (a.trips - 1) * up, following)
}

/// What a bus whose senders take turns adds to a sample's latency: at each handover the
/// receivers wait for the message that starts the next turn, which waits for another chain's
/// message — that chain's step, the new sender's work from it to its send (the wait's relay
/// work), then the bus's own step. Turns whose sends wait for no other chain may overlap:
/// nothing is added for them.
fn handovers(c: &ChainOn, chains: &[ChainOn], costs: StepCosts) -> u64 {
    let (Some(f), Some(w)) = (c.flow, c.waits) else {
        return 0;
    };
    if !c.bus || f.handovers == 0 {
        return 0;
    }
    let before = chains
        .get(w.on)
        .filter(|o| o.length >= 2)
        .map_or(0, |o| latency(o, costs));
    f.handovers * (before + w.relay_work + latency(c, costs))
}

/// Cycles chain `c` adds to a sample's latency.
fn latency(c: &ChainOn, costs: StepCosts) -> u64 {
    let StepCosts {
        hop,
        switch,
        add_rate,
    } = costs;
    let steps = c.length - 1;
    match c.flow {
        Some(f) if f.relays > 0 => {
            let (crossing, msg) = crossing(c, f, hop);
            // The messages after the first follow one message apart (their relays are in
            // the PE's work); on the chain that carries the result they are the result
            // leaving, which the batch's fill counts.
            let following = if c.bound.is_some() { 0 } else { f.relays - 1 };
            crossing + following * msg
        }
        // The result leaving from the region's edge PEs: the batch's fill counts it.
        Some(_) if c.bound.is_some() => 0,
        Some(f) if f.messages > 0 => {
            let hops = if c.bus { steps } else { 1 };
            hops * hop + switch + f.words.div_ceil(f.messages)
        }
        Some(_) => 0,
        // A bus the dry runs did not measure: nothing, as before buses were chains.
        None if c.bus => 0,
        None => {
            let msg = c.bound.unwrap_or(1);
            steps * (hop + switch + msg + msg.div_ceil(add_rate))
        }
    }
}

/// One message's crossing of chain `c`, which relays (`f.relays > 0`): each step a hop, the
/// message's words and the relay's work; with the message's words.
fn crossing(c: &ChainOn, f: ChainFlow, hop: u64) -> (u64, u64) {
    let msg = f.relay_words.div_ceil(f.relays);
    ((c.length - 1) * (hop + msg + f.relay_work), msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COSTS: StepCosts = StepCosts {
        hop: 2,
        switch: 2,
        add_rate: 2,
    };

    fn on(length: u64, flow: ChainFlow) -> ChainOn {
        ChainOn {
            length,
            bound: None,
            flow: Some(flow),
            waits: None,
            bus: false,
            answer: None,
        }
    }

    #[test]
    fn a_relay_takes_a_step_per_pe() {
        // row_allreduce's running sum on 1 × 8: 64 words a sample, each relayed 73 cycles
        // after it arrived. Each of the 7 steps: the hop (2), the 64 wavelets, the relay (73);
        // one relay is in the PE's work already.
        let sum = ChainFlow {
            messages: 1,
            words: 64,
            relays: 1,
            relay_words: 64,
            relay_work: 73,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        };
        let t = chain_terms(&[on(8, sum)], COSTS);
        assert_eq!(
            t,
            ChainTerms {
                chain: 0,
                steps: 7 * (2 + 64 + 73) - 73
            }
        );
        // Three messages a sample (jacobi5's rows, 10 words, 5 cycles each): the first
        // crosses the 3 steps, the other two follow one message apart (their relays are in
        // the PE's work).
        let rows = ChainFlow {
            messages: 3,
            words: 30,
            relays: 3,
            relay_words: 30,
            relay_work: 5,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        };
        let t = chain_terms(&[on(4, rows)], COSTS);
        assert_eq!(t.steps, 3 * (2 + 10 + 5) + 2 * 10 - 5);
        // The same messages as the result (csl's bandwidth-test, each column's block passed
        // east to the host): the two that follow are the result leaving, in the fill.
        let result = ChainOn {
            bound: Some(30),
            ..on(4, rows)
        };
        assert_eq!(chain_terms(&[result], COSTS).steps, 3 * (2 + 10 + 5) - 5);
    }

    #[test]
    fn a_chain_entered_at_the_edge_keeps_every_relay() {
        // csl's gemv-09 on 3 × 4: each row's sum (2 words) crosses the 4 columns, column 0
        // relaying b from the west edge: every column's relay (14 cycles) is on the way, so
        // none is taken back: 3 · (2 + 2 + 14) = 54, where a chain started by a send would
        // take one relay back, 54 − 14 = 40.
        let sum = ChainFlow {
            messages: 1,
            words: 2,
            relays: 1,
            relay_words: 2,
            relay_work: 14,
            first_relays: true,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        };
        assert_eq!(chain_terms(&[on(4, sum)], COSTS).steps, 3 * (2 + 2 + 14));
        let sent = ChainFlow {
            first_relays: false,
            ..sum
        };
        assert_eq!(
            chain_terms(&[on(4, sent)], COSTS).steps,
            3 * (2 + 2 + 14) - 14
        );
    }

    #[test]
    fn an_exchange_takes_one_step() {
        // jacobi5's halos: 500 messages of 16 words a sample, none waiting for the
        // neighbour's same message: one hop (2), a switch (2) and one message (16).
        let halos = ChainFlow {
            messages: 500,
            words: 8000,
            ..ChainFlow::default()
        };
        assert_eq!(chain_terms(&[on(16, halos)], COSTS).steps, 2 + 2 + 16);
        // Halos on four sides (csl's 7-point stencil, 10 words east and west, 16 north and
        // south): sent together, they overlap: the longest step, 2 + 2 + 16.
        let rows = ChainFlow {
            messages: 1,
            words: 10,
            ..ChainFlow::default()
        };
        let sides = [on(4, rows), on(4, rows), on(4, halos), on(4, halos)];
        assert_eq!(chain_terms(&sides, COSTS).steps, 2 + 2 + 16);
        // A chain its PEs send nothing on per sample adds nothing.
        assert_eq!(chain_terms(&[on(16, ChainFlow::default())], COSTS).steps, 0);
    }

    #[test]
    fn exchanges_that_wait_for_each_other_add_up() {
        // csl's residual on 2 × 2: x south (2 words), then the partial sums east (3 words)
        // once x came, then the norm north (1 word) once the sums came. Each a step of a hop
        // (2), a switch (2) and the message: 6, 7 and 5. The sums and the norm wait for the
        // chain before them: 6 + 7 + 5 = 18, where overlapping exchanges would take 7.
        let sent = |words| ChainFlow {
            messages: 1,
            words,
            ..ChainFlow::default()
        };
        let x = on(2, sent(2));
        let sums = ChainOn {
            waits: Some(Wait {
                on: 0,
                relay_work: 0,
            }),
            ..on(2, sent(3))
        };
        let norm = ChainOn {
            waits: Some(Wait {
                on: 1,
                relay_work: 0,
            }),
            ..on(2, sent(1))
        };
        assert_eq!(chain_terms(&[x, sums, norm], COSTS).steps, 6 + 7 + 5);
        assert_eq!(
            chain_terms(&[x, on(2, sent(3)), on(2, sent(1))], COSTS).steps,
            7
        );
    }

    #[test]
    fn a_bus_message_crosses_the_line() {
        // csl's gemv-collectives_2d on 4 × 4: PE (0, 0) sends x (16 words) along row 0's bus,
        // then each of row 0's PEs sends its x tile down its column's bus once x came (PE
        // (0, 0) sends b first: 2 messages, 36 words, 18 a message). Each message reaches the
        // line's far end: 3 hops (6), a switch (2) and the message: 24 along the row, 26 down
        // the columns, after the row's: 50. As neighbour exchanges they would be one hop:
        // 2 + 2 + 16 = 20 and 2 + 2 + 18 = 22, 42.
        let row = ChainFlow {
            messages: 1,
            words: 16,
            ..ChainFlow::default()
        };
        let col = ChainFlow {
            messages: 2,
            words: 36,
            ..ChainFlow::default()
        };
        let after_row = Some(Wait {
            on: 0,
            relay_work: 0,
        });
        let bus = |flow, waits| ChainOn {
            bus: true,
            waits,
            ..on(4, flow)
        };
        let buses = [bus(row, None), bus(col, after_row)];
        assert_eq!(chain_terms(&buses, COSTS).steps, 24 + 26);
        let links = [
            on(4, row),
            ChainOn {
                waits: after_row,
                ..on(4, col)
            },
        ];
        assert_eq!(chain_terms(&links, COSTS).steps, 20 + 22);
        // A bus the dry runs did not measure adds nothing.
        let unknown = ChainOn {
            flow: None,
            ..bus(row, None)
        };
        assert_eq!(chain_terms(&[unknown], COSTS), ChainTerms::default());
    }

    #[test]
    fn a_bus_whose_senders_take_turns_waits_at_each_handover() {
        // csl's cholesky on 10 × 10: a column's bus carries each pivot column (4 words) from
        // the diagonal PE down; each PE of that column scales its own column and sends it
        // along its row's bus 60 cycles after the pivot came. Each bus message reaches its
        // line's far end: 9 hops (18), a switch (2), 4 words: 24. The row's sending passes
        // to the next column of PEs 8 times (PE (9, 9) takes 36 messages, a sender sends 4),
        // and each handover waits for the message that starts the new turn: the pivot down
        // the column (24), the new sender's 60 cycles, its row message (24): 108. In all
        // 24 + 24 + 8 · 108 = 912.
        let four = ChainFlow {
            messages: 4,
            words: 16,
            ..ChainFlow::default()
        };
        let col = ChainOn {
            bus: true,
            ..on(10, four)
        };
        let row = ChainOn {
            bus: true,
            waits: Some(Wait {
                on: 0,
                relay_work: 60,
            }),
            ..on(
                10,
                ChainFlow {
                    handovers: 8,
                    ..four
                },
            )
        };
        assert_eq!(
            chain_terms(&[col, row], COSTS).steps,
            24 + 24 + 8 * (24 + 60 + 24)
        );
        // Turns that wait for no other chain's message may overlap: only the bus's step.
        let free = ChainOn { waits: None, ..row };
        assert_eq!(chain_terms(&[col, free], COSTS).steps, 24);
        // A neighbour's link hands over nothing: the term is a bus's.
        let link = ChainOn { bus: false, ..row };
        assert_eq!(chain_terms(&[col, link], COSTS).steps, 24 + (2 + 2 + 4));
    }

    #[test]
    fn a_round_trip_is_in_the_period() {
        // layernorm_row on 1 × 5: two words east (relayed after 20 cycles) and two back west
        // (after 10), the next sample waiting for the total from the east. Each chain's latency
        // is 4 steps: east 4 · (2 + 2 + 20) = 96, west 4 · (2 + 2 + 10) = 56, less the two
        // relays in the PE's work (30); PE 0 waits for both before its next sample.
        let east = ChainFlow {
            messages: 1,
            words: 2,
            relays: 1,
            relay_words: 2,
            relay_work: 20,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        };
        let west = ChainFlow {
            relay_work: 10,
            round_trip: true,
            ..east
        };
        let t = chain_terms(&[on(5, east), on(5, west)], COSTS);
        let both = 96 + 56 - 30;
        assert_eq!(
            t,
            ChainTerms {
                chain: both,
                steps: both
            }
        );
    }

    #[test]
    fn a_send_that_waits_for_its_answer_takes_a_round_trip() {
        // A 1 × 4 row allreduce three times a sample, as csl's bicgstab's dot products: each
        // PE adds its partial to the running sum from the west and passes it east (1 word,
        // relayed 13 cycles after it came); the last column sends the total back on the
        // row's bus, and every PE takes it before its next round. A round: up the row, 3
        // steps of a hop (2), the word (1) and the relay (13): 48; the combine's relay is in
        // the PE's work (− 13); back on the bus, 3 hops (6), a switch (2) and the word (1): 9.
        // 48 − 13 + 9 = 44 a round, three rounds: 132.
        let sum = ChainFlow {
            messages: 3,
            words: 3,
            relays: 3,
            relay_words: 3,
            relay_work: 13,
            ..ChainFlow::default()
        };
        let answered = ChainOn {
            answer: Some(Answer { trips: 3, back: 9 }),
            ..on(4, sum)
        };
        // The period holds the PE's waits: the three answers' way back and the two ways up
        // after the first, 3 · 9 + 2 · 35 = 97.
        let t = chain_terms(&[answered], COSTS);
        assert_eq!(
            t,
            ChainTerms {
                chain: 2 * 44 + 9,
                steps: 3 * (48 - 13 + 9)
            }
        );
        // Without the answers the three sums follow one word apart: 48 + 2 − 13 = 37.
        assert_eq!(chain_terms(&[on(4, sum)], COSTS).steps, 48 + 2 - 13);
        // The total back west along a relaying chain instead (std.collectives'
        // `row_allreduce`, 5 cycles a relay): no bus to cross, the way back is that chain's
        // 3 · (2 + 1 + 5) = 24, less its relay in the work: a round is 35 + 19 = 54, three 162
        // (neither chain's sums follow one word apart).
        let west = ChainOn {
            answer: None,
            ..on(
                4,
                ChainFlow {
                    relay_work: 5,
                    ..sum
                },
            )
        };
        let east = ChainOn {
            answer: Some(Answer { trips: 3, back: 0 }),
            ..on(4, sum)
        };
        assert_eq!(chain_terms(&[east, west], COSTS).steps, 3 * (35 + 19));
        // Sends answered on a bus with no relaying chain to reduce along: nothing to wait
        // for beyond the exchange's step, 2 + 2 + 1.
        let sent = ChainFlow {
            relays: 0,
            relay_words: 0,
            relay_work: 0,
            ..sum
        };
        let alone = ChainOn {
            answer: Some(Answer { trips: 3, back: 9 }),
            ..on(4, sent)
        };
        assert_eq!(chain_terms(&[alone], COSTS).steps, 2 + 2 + 1);
    }

    #[test]
    fn unknown_chains_take_the_bound_part() {
        // dense_tile's partial sums down 4 rows, 16 words, nothing measured: each of the 3
        // steps a hop, a switch, the 16 wavelets and their 8 adds; the period waits for the
        // 16 wavelets. An unbound chain is one wavelet a step.
        let sums = ChainOn {
            length: 4,
            bound: Some(16),
            flow: None,
            waits: None,
            bus: false,
            answer: None,
        };
        let other = ChainOn {
            length: 2,
            bound: None,
            flow: None,
            waits: None,
            bus: false,
            answer: None,
        };
        let t = chain_terms(&[sums, other], COSTS);
        assert_eq!(t.chain, 16);
        assert_eq!(t.steps, 3 * (2 + 2 + 16 + 8) + (2 + 2 + 1 + 1));
        // One PE along it: no chain.
        let t = chain_terms(&[ChainOn { length: 1, ..sums }], COSTS);
        assert_eq!(t, ChainTerms::default());
    }
}
